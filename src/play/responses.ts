/**
 * Where `agentic play` gets the responses a person gives: a script (a file, or stdin with `-`),
 * one response per line, or the terminal, one line per turn. Both read a line the same way: `\n`
 * is a new line and `\t` a tab (so a multi-line response fits on one line), `\\` a backslash; any
 * other backslash is kept as written, so JSON such as `{"a": "\"x\""}` needs no extra escaping.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { firstLine, UsageError } from '../errors';

export interface ResponseSource {
  /** Where the responses come from, for messages ("you", "script turns.txt"). */
  readonly label: string;
  /** The next line, escapes decoded; null once the input has ended. `prompt` is shown to a person. */
  next(prompt: string): Promise<string | null>;
  close(): void;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', '\\': '\\' };

/** A typed or scripted line as the response it stands for (see the header for the escapes). */
export function decodeEscapes(line: string): string {
  return line.replace(/\\([nt\\])/g, (_, c: string) => ESCAPES[c]!);
}

/** The lines of a script: one response each; a last newline does not start another, `\r\n` ends a line too. */
export function scriptLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Reads `--script FILE` (or stdin for `-`) whole; a path that cannot be read is a one-line UsageError. */
export async function readScript(path: string): Promise<string> {
  if (path === '-') return await new Response(Bun.stdin.stream()).text();
  if (!existsSync(path)) throw new UsageError(`--script ${path}: no such file`);
  if (statSync(path).isDirectory()) throw new UsageError(`--script ${path}: is a folder; expected a text file with one response per line`);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--script ${path}: cannot read it: ${firstLine(error)}`);
  }
}

/** A script's responses, in order. */
export class ScriptSource implements ResponseSource {
  private used = 0;

  constructor(
    readonly label: string,
    private readonly lines: readonly string[],
    /** Each response is echoed after the prompt, so the output reads like a typed session. */
    private readonly echo: (text: string) => void,
  ) {}

  async next(prompt: string): Promise<string | null> {
    if (this.used >= this.lines.length) return null;
    const line = this.lines[this.used++]!;
    this.echo(`${prompt}${line}`);
    return decodeEscapes(line);
  }

  /** Lines the episode did not get to. */
  get unread(): number {
    return this.lines.length - this.used;
  }

  get read(): number {
    return this.used;
  }

  close(): void {}
}

/**
 * A person at the terminal, through readline (line editing, history). Ctrl-D on an empty line
 * ends the input (next() gives null). Ctrl-C arrives as a key, not a signal, while readline holds
 * the terminal, so it is handled here: `onInterrupt` (the command prints one line and exits 130).
 */
export class TerminalSource implements ResponseSource {
  readonly label = 'you';
  private readonly rl: Interface;
  private ended = false;

  constructor(onInterrupt: () => void) {
    this.rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true, historySize: 100 });
    this.rl.on('close', () => {
      this.ended = true;
    });
    this.rl.on('SIGINT', () => {
      this.close(); // gives the terminal back its normal mode before the process exits
      onInterrupt();
    });
  }

  next(prompt: string): Promise<string | null> {
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onClose = () => {
        process.stdout.write('\n');
        resolve(null);
      };
      this.rl.once('close', onClose);
      this.rl.question(prompt, (answer) => {
        this.rl.off('close', onClose);
        resolve(decodeEscapes(answer));
      });
    });
  }

  close(): void {
    if (!this.ended) this.rl.close();
  }
}
