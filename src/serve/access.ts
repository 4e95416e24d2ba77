/**
 * Who may call what. Three kinds of endpoint: open ones (`/health`, `/health_generate`, as
 * SGLang leaves them open for load balancers), the serving ones (generation, tokenizing, model
 * and server info) and the admin ones (weights, adapters, pause, continue, abort, cache). With an
 * API key the serving endpoints need `Authorization: Bearer <key>`; the admin ones need the admin
 * key, or the API key when no admin key is set. The admin key opens every endpoint, so a trainer
 * that syncs weights sends it as its one key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { RequestError } from '../util/request_body';

export type Access = 'open' | 'serving' | 'admin';

export interface Keys {
  api: string | null;
  admin: string | null;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Equal in time independent of where they differ (both hashed to one length first). */
function sameKey(given: string, key: string): boolean {
  return timingSafeEqual(digest(given), digest(key));
}

function bearer(request: Request): string | null {
  const header = request.headers.get('authorization');
  const match = header === null ? null : /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1]! : null;
}

/** Throws a 401 (no or wrong key) or 403 (the API key at an admin endpoint) unless `request` may use an endpoint of `access`. */
export function authorize(request: Request, access: Access, keys: Keys): void {
  const adminKey = keys.admin ?? keys.api;
  const needed = access === 'open' ? [] : access === 'serving' ? [keys.api, adminKey] : [adminKey];
  if (needed[0] == null) return;
  const given = bearer(request);
  if (given === null) throw new RequestError(401, 'this server needs an API key: send Authorization: Bearer <key>');
  if (needed.some((key) => key !== null && sameKey(given, key))) return;
  if (access === 'admin' && keys.api !== null && sameKey(given, keys.api)) {
    throw new RequestError(403, 'this endpoint needs the admin key (--admin-key); the API key serves generation only');
  }
  throw new RequestError(401, 'wrong API key');
}
