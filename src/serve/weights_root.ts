/**
 * The one folder a client may have the server load weights and adapters from (--weights-root).
 * A path a client sends (absolute, or relative to the root) is refused when it lies outside the
 * root before anything is read, and again when the links in it lead outside (realpath). Refusals
 * and load errors name the path as the client wrote it and the root as `<weights root>`, never the
 * server's own paths; the server's log keeps the whole message.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { displayPath } from '../util/paths';
import { RequestError } from '../util/request_body';

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export class WeightsRoot {
  /** `root`: absolute; null loads nothing a client names. */
  constructor(readonly root: string | null) {}

  /** The real folder `given` names under the root; a 403 naming `field` where none is served or it lies outside. */
  folder(given: string, field: string): string {
    if (this.root === null) throw new RequestError(403, `${field}: this server loads no folders a client names (it was started without --weights-root)`, field);
    const outside = new RequestError(403, `${field}: '${given}' is outside the weights root`, field);
    const real = this.realRoot();
    const path = resolve(this.root, given);
    if (!inside(this.root, path) && !(real !== null && inside(real, path))) throw outside;
    let target: string;
    try {
      target = realpathSync(path);
    } catch {
      throw new RequestError(400, `${field}: no folder '${given}' under the weights root`, field);
    }
    if (real === null || !inside(real, target)) throw outside;
    return target;
  }

  /** `message` as a client may read it: `folder` (the real path of `given`) spelled `given`, the root `<weights root>`. */
  redact(message: string, folder: string, given: string): string {
    const mark = '\u0000';
    let text = message.replaceAll(folder, mark).replaceAll(displayPath(folder), mark);
    for (const root of [this.realRoot(), this.root]) if (root !== null) text = text.replaceAll(root, '<weights root>');
    return text.replaceAll(mark, given);
  }

  private realRoot(): string | null {
    if (this.root === null) return null;
    try {
      return realpathSync(this.root);
    } catch {
      return null;
    }
  }
}
