/** The names the config accepts for the algorithm's choices (no tfjs here: the schema imports it). */

export const KL_PENALTIES = ['kl', 'abs', 'mse', 'k3', 'low_var_kl', 'full'] as const;
export type KlPenalty = (typeof KL_PENALTIES)[number];

export const LOSS_AGG_MODES = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const;
export type LossAggMode = (typeof LOSS_AGG_MODES)[number];

/** actor_train.pg_variant: the policy losses of ROLL's agentic ActorWorker. */
export const PG_VARIANTS = ['ppo', 'topr', 'vanilla', 'tis', 'cispo', 'kimi15'] as const;
export type PgVariantName = (typeof PG_VARIANTS)[number];
