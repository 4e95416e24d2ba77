/**
 * The CLI's messages: consola with a reporter that prints each message as one line on stderr
 * ("error: ...", "warning: ..."), colored on a terminal. Data (a config, a listing) goes to
 * stdout with `out`, so it can be piped.
 */
import { createConsola, type ConsolaReporter, type LogObject } from 'consola';
import { formatWithOptions } from 'node:util';

const useColor = () => Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
const paint = (code: number, text: string) => (useColor() ? `\u001B[${code}m${text}\u001B[39m` : text);

const PREFIX: Record<string, (text: string) => string> = {
  fatal: (t) => `${paint(31, 'error:')} ${t}`,
  error: (t) => `${paint(31, 'error:')} ${t}`,
  warn: (t) => `${paint(33, 'warning:')} ${t}`,
  success: (t) => `${paint(32, 'done:')} ${t}`,
};

const oneLineReporter: ConsolaReporter = {
  log(entry: LogObject) {
    const text = formatWithOptions({ colors: false }, ...entry.args);
    const line = (PREFIX[entry.type] ?? ((t: string) => t))(text);
    process.stderr.write(`${line}\n`);
  },
};

// an explicit level: consola would otherwise go quiet under NODE_ENV=test
export const log = createConsola({ reporters: [oneLineReporter], level: 3 });

/** Writes data to stdout. */
export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
