/** What every stage of a step reads besides the batch: the run's settings, the roles, the step's log. */
import type { KlController } from '../../algo/kl';
import type { RoleBaselines } from '../../algo/role_baselines';
import type { AgenticConfig } from '../../config/schema';
import type { PluginHost } from '../../host/plugin_host';
import type { ChatFormat } from '../../rollout/chat';
import type { UpdateResult } from '../update';
import type { Roles } from '../roles';
import type { StepLog } from '../step_log';

export interface StepContext {
  step: number;
  /** actor_train's policy version before this step: the steps that trained (the learning-rate schedule's position). */
  version: number;
  config: AgenticConfig;
  roles: Roles;
  chat: ChatFormat;
  host: PluginHost;
  log: StepLog;
  /** The text of one token id, memoised (think_credit reads responses token by token). */
  pieceOf: (id: number) => string;
  /** The reward's KL coefficient, which an adaptive controller moves. */
  kl: KlController;
  /** rae's running baseline per env tag and seat. */
  roleBaselines: RoleBaselines;
  /** The batch was sampled by weights older than actor_train's or by another engine (../rollout_source.ts sampledElsewhere). */
  sampledElsewhere: boolean;
  /** Counts a role's skipped updates (the trainer stops a run that diverged). */
  noteSkipped: (role: string, result: Pick<UpdateResult, 'optimizerSteps' | 'skipped' | 'skippedAtEnd'>) => void;
  /** Test seam: makes the loss of one optimizer step NaN (`update` counts from 0 within the step). */
  poison?: (step: number, role: 'actor' | 'critic', update: number) => boolean;
}

/**
 * With skip_zero_advantage_samples the reference scores only the rows the actor learns from, once
 * the advantages are known, unless the reward's KL needs it on every row first.
 */
export function referenceAfterCredit(ctx: Pick<StepContext, 'config' | 'roles'>): boolean {
  return ctx.roles.reference !== null && ctx.config.skip_zero_advantage_samples && !ctx.config.add_token_level_kl;
}
