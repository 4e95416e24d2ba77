/**
 * The secrets a config can hold: the password in distributed.redis_url (or any URL's user part)
 * and the inference servers' API keys (llm_proxy.proxy_config.api_key). A run keeps them in memory
 * to connect; everything it writes or prints (the run's config record, checkpoints' configs, the
 * log, `agentic config`) carries MASK in their place.
 *
 * They can come from the environment instead of the config: AGENTIC_REDIS_URL is the Redis of a
 * config whose distributed.redis_url is null, and proxy_config.api_key_env names the variable that
 * holds the API key. A saved config whose secrets were masked runs again where the environment
 * gives them back (resume, eval --checkpoint); where it does not, loading it is one line saying so.
 */
import { ConfigError } from '../errors';
import { isHttpProxy, type AgenticConfig } from './schema';

export const MASK = '***';

/** The environment variable that gives the Redis URL, password included. */
export const REDIS_URL_VARIABLE = 'AGENTIC_REDIS_URL';

/**
 * A URL's user part: in a text without spaces, everything between `scheme://` and its last `@` (a
 * password is written percent-encoded, `p%2Fa%40ss`, but a raw `/` or `@` in it is masked too).
 */
const USER_PART = /^([a-z][a-z0-9+.-]*:\/\/)(\S*)@(?=[^@\s]*$)/i;

/** `text` with the password of a URL's user part masked (`redis://user:***@host`); any other text as it is. */
export function maskUrl(text: string): string {
  return text.replace(USER_PART, (_, scheme: string, user: string) => {
    const colon = user.indexOf(':');
    // no colon: the user part may be the password itself (redis://secret@host)
    return colon === -1 ? `${scheme}${MASK}@` : `${scheme}${user.slice(0, colon)}:${MASK}@`;
  });
}

function isMaskedUrl(url: string): boolean {
  const user = USER_PART.exec(url)?.[2];
  return user !== undefined && (user === MASK || user.endsWith(`:${MASK}`));
}

/** A copy of a config (or any part of one) with every secret masked: what is written and printed. */
export function maskSecrets<T>(value: T): T {
  return mask(value, '') as T;
}

function mask(value: unknown, key: string): unknown {
  if (typeof value === 'string') return key === 'api_key' ? MASK : maskUrl(value);
  if (Array.isArray(value)) return value.map((item) => mask(item, ''));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k)]));
  return value;
}

/** A command-line override as it is recorded: `...api_key=***`, a URL's password masked. */
export function maskOverride(text: string): string {
  const eq = text.indexOf('=');
  if (eq === -1) return text;
  const key = text.slice(0, eq);
  return `${key}=${/(^|\.)api_key$/.test(key) ? MASK : maskUrl(text.slice(eq + 1))}`;
}

/**
 * Fills the config's secrets from the environment, in place: a null distributed.redis_url from
 * AGENTIC_REDIS_URL, a masked one from AGENTIC_REDIS_URL naming the same Redis, an API key from
 * its api_key_env. Throws a one-line ConfigError where a secret the run needs is missing.
 */
export function resolveSecrets(config: AgenticConfig, env: Record<string, string | undefined> = process.env): void {
  resolveRedisUrl(config, env[REDIS_URL_VARIABLE] || null);
  for (const manager of ['train_env_manager', 'val_env_manager'] as const) {
    const proxy = config[manager].llm_proxy;
    const at = `${manager}.llm_proxy.proxy_config`;
    const { api_key: key, api_key_env: variable } = proxy.proxy_config;
    const needed = isHttpProxy(proxy.proxy_type);
    if (variable !== null) {
      if (key !== null && key !== MASK) throw new ConfigError(`${at}: give api_key or api_key_env, not both`);
      const value = env[variable];
      if (value) proxy.proxy_config.api_key = value;
      else if (needed) throw new ConfigError(`${at}.api_key_env: environment variable ${variable} is not set`);
      else proxy.proxy_config.api_key = null;
    } else if (key === MASK && needed) {
      throw new ConfigError(
        `${at}.api_key: the key was masked (${MASK}) when this config was saved; give it through api_key_env=VARIABLE (an environment variable) or api_key=KEY`,
      );
    }
  }
}

function resolveRedisUrl(config: AgenticConfig, fromEnv: string | null): void {
  if (fromEnv !== null && !/^rediss?:\/\//.test(fromEnv)) {
    throw new ConfigError(`${REDIS_URL_VARIABLE}: expected redis://HOST:PORT (or rediss:// for TLS), got '${maskUrl(fromEnv)}'`);
  }
  const url = config.distributed.redis_url;
  if (url === null) {
    config.distributed.redis_url = fromEnv;
    return;
  }
  if (!isMaskedUrl(url)) return;
  if (fromEnv === null) {
    throw new ConfigError(`distributed.redis_url: the password of ${url} was masked when this config was saved; give the URL with it in ${REDIS_URL_VARIABLE}`);
  }
  if (maskUrl(fromEnv) !== url)
    throw new ConfigError(`distributed.redis_url: ${url} is masked, and ${REDIS_URL_VARIABLE} names another Redis (${maskUrl(fromEnv)})`);
  config.distributed.redis_url = fromEnv;
}
