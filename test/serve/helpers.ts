/** `agentic serve` as a child process on a free loopback port, and HTTP calls to it. */
import { MAIN, ROOT } from '../helpers';

export interface ServeProcess {
  url: string;
  child: ReturnType<typeof Bun.spawn>;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `agentic serve --port 0 ...args` (or the binary at `bin`, in `cwd` with `env` added) and
 * waits for its "serving ... on URL" line.
 */
export async function startServe(
  args: readonly string[],
  options: { bin?: string; cwd?: string; env?: Record<string, string>; port?: number } = {},
): Promise<ServeProcess> {
  const command = options.bin ? [options.bin, 'serve'] : [process.execPath, MAIN, 'serve'];
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  delete env.AGENTIC_DEBUG;
  const child = Bun.spawn([...command, '--port', String(options.port ?? 0), ...args], {
    cwd: options.cwd ?? ROOT,
    env,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  });
  let text = '';
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  const url = await new Promise<string>((resolve, reject) => {
    let found = false;
    const pump = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        const match = / on (http:\/\/[^ ]+) \(/.exec(text);
        if (match && !found) {
          found = true;
          resolve(match[1]!);
        }
      }
      if (!found) reject(new Error(`agentic serve exited before serving: ${text}`));
    };
    pump().catch(reject);
  });
  return {
    url,
    child,
    stderr: () => text,
    stop: async () => {
      child.kill('SIGTERM');
      return child.exited;
    },
  };
}

export interface Reply {
  status: number;
  /** The JSON body, read as each test needs it. */
  body: any;
  headers: Headers;
}

export async function call(url: string, path: string, body?: unknown, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text), headers: response.headers };
}

/** Polls /get_server_info until `ready` holds (or fails after `ms`). */
export async function waitForInfo(url: string, ready: (info: any) => boolean, ms = 10_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { body } = await call(url, '/get_server_info');
    if (ready(body)) return body;
    if (Date.now() > deadline) throw new Error(`server info never got there: ${JSON.stringify(body)}`);
    await Bun.sleep(5);
  }
}
