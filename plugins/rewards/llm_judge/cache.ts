/**
 * The judge's replies by key (sha256 of the model and the filled rubric, which holds the question,
 * the answer and the reference), so a sample judged once is never paid for again: in memory for
 * the process, and in a JSON-lines file when one is named, so a resumed or repeated run pays
 * nothing either. The reply is kept, not the score, so a change of parser re-reads it for free.
 *
 * The file is append-only, one `{"key", "reply"}` line per reply, each written with one append
 * (O_APPEND), so processes sharing it never interleave their lines. A line cut short by a crash is
 * skipped when the file is read, and a newline is added before the next entry goes after it.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function cacheKey(model: string, prompt: string): string {
  return createHash('sha256')
    .update(JSON.stringify([model, prompt]))
    .digest('hex');
}

const memory = new Map<string, string>();
/** Cache files read so far, by absolute path. */
const files = new Set<string>();

export class ReplyCache {
  private readonly file: string | null;

  /** `file` is relative to the working folder; null keeps replies in memory only. */
  constructor(file: string | null) {
    this.file = file === null ? null : resolve(file);
    if (this.file !== null && !files.has(this.file)) {
      files.add(this.file);
      readCacheFile(this.file);
    }
  }

  get(key: string): string | undefined {
    return memory.get(key);
  }

  set(key: string, reply: string): void {
    if (memory.get(key) === reply) return;
    memory.set(key, reply);
    if (this.file !== null) appendFileSync(this.file, `${JSON.stringify({ key, reply })}\n`);
  }
}

function readCacheFile(file: string): void {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    return;
  }
  const text = readFileSync(file, 'utf8');
  for (const line of text.split('\n')) {
    const entry = readLine(line);
    if (entry) memory.set(entry.key, entry.reply);
  }
  // a line cut short by a crash must not swallow the next entry
  if (text.length > 0 && !text.endsWith('\n')) appendFileSync(file, '\n');
}

function readLine(line: string): { key: string; reply: string } | null {
  if (line.trim() === '') return null;
  try {
    const entry = JSON.parse(line) as { key?: unknown; reply?: unknown };
    return typeof entry.key === 'string' && typeof entry.reply === 'string' ? { key: entry.key, reply: entry.reply } : null;
  } catch {
    return null;
  }
}

/** Forgets every reply held in memory and the files read (tests start clean with it). */
export function clearReplyCache(): void {
  memory.clear();
  files.clear();
}
