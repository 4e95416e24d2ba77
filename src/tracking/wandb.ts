/**
 * `track_with: wandb`, decided before any training work. There is no W&B client in agentic, so
 * the answer is always a one-line ConfigError; what it says depends on why: no API key, W&B not
 * reachable, or reachable (then: log to TensorBoard and upload with `wandb sync`). A run that
 * asked for W&B must never find that out an hour in.
 */
import { ConfigError, firstLine } from '../errors';

export const WANDB_TIMEOUT_MS = 3000;

/** Resolves when `url` answers at all (any HTTP status); rejects with the reason otherwise. */
export type ReachProbe = (url: string, timeoutMs: number) => Promise<void>;

export const fetchProbe: ReachProbe = async (url, timeoutMs) => {
  const response = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
  await response.body?.cancel();
};

function why(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${WANDB_TIMEOUT_MS / 1000} s`;
  return firstLine(error) || 'no answer';
}

/**
 * Throws the one-line ConfigError for `track_with: wandb`. `env` supplies WANDB_API_KEY and, for
 * a self-hosted server, WANDB_BASE_URL.
 */
export async function refuseWandb(loggingDir: string, env: Record<string, string | undefined> = process.env, probe: ReachProbe = fetchProbe): Promise<never> {
  const offline = `; drop wandb from track_with, or log with track_with: [tensorboard] and upload later with wandb sync --sync-tensorboard ${loggingDir}/tensorboard`;
  if (!env.WANDB_API_KEY) throw new ConfigError(`track_with: wandb needs WANDB_API_KEY, which is not set${offline}`);
  const url = env.WANDB_BASE_URL || 'https://api.wandb.ai';
  try {
    await probe(url, WANDB_TIMEOUT_MS);
  } catch (error) {
    throw new ConfigError(`track_with: wandb: ${url} is unreachable (${why(error)})${offline}`);
  }
  throw new ConfigError(
    `track_with: wandb: streaming to W&B is not built into agentic; use track_with: [tensorboard] and upload with wandb sync --sync-tensorboard ${loggingDir}/tensorboard`,
  );
}
