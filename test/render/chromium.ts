/**
 * Headless Chromium for the report tests: start Debian's `chromium` on a free DevTools port with a
 * throw-away profile, talk the DevTools Protocol to one page over a WebSocket, and collect every
 * sign of a broken page (uncaught exceptions, console errors, error log entries, failed loads).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The Chromium executable on PATH, or null. */
export function findChromium(): string | null {
  for (const name of ['chromium', 'chromium-browser']) {
    const path = Bun.which(name);
    if (path) return path;
  }
  return null;
}

type Params = Record<string, unknown>;
interface Message {
  id?: number;
  method?: string;
  params?: Params;
  result?: Params;
  error?: { message: string };
}

/** One DevTools Protocol connection: commands by id, events by name. */
export class DevTools {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: Params) => void; reject: (error: Error) => void; method: string }>();
  private readonly listeners = new Map<string, Array<(params: Params) => void>>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as Message;
      if (message.id !== undefined) {
        const waiting = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) waiting?.reject(new Error(`${waiting.method}: ${message.error.message}`));
        else waiting?.resolve(message.result ?? {});
      } else if (message.method) {
        for (const listener of this.listeners.get(message.method) ?? []) listener(message.params ?? {});
      }
    });
    socket.addEventListener('close', () => {
      for (const waiting of this.pending.values()) waiting.reject(new Error(`${waiting.method}: the DevTools connection closed`));
      this.pending.clear();
    });
  }

  static connect(url: string): Promise<DevTools> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.addEventListener('open', () => resolve(new DevTools(socket)), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot open ${url}`)), { once: true });
    });
  }

  send<T = Params>(method: string, params: Params = {}, timeoutMs = 10_000): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        method,
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  on(method: string, listener: (params: Params) => void): void {
    this.listeners.set(method, [...(this.listeners.get(method) ?? []), listener]);
  }

  /** Resolves at the next `method` event; arm it before the action that causes the event. */
  next(method: string, timeoutMs = 10_000): Promise<Params> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${method} within ${timeoutMs} ms`)), timeoutMs);
      let done = false;
      this.on(method, (params) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(params);
      });
    });
  }

  /** Evaluates an expression in the page (awaiting a promise) and returns its value as JSON. */
  async evaluate<T>(expression: string): Promise<T> {
    const { result, exceptionDetails } = await this.send<{
      result: { value?: unknown };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    }>('Runtime.evaluate', {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    if (exceptionDetails) throw new Error(`page evaluation failed: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    return result.value as T;
  }

  close(): void {
    this.socket.close();
  }
}

/** Everything that says a page is broken, one line each. */
export class PageProblems {
  readonly lines: string[] = [];

  constructor(page: DevTools) {
    page.on('Runtime.exceptionThrown', (p) => {
      const details = p.exceptionDetails as { text: string; exception?: { description?: string } };
      this.lines.push(`exception: ${details.exception?.description?.split('\n')[0] ?? details.text}`);
    });
    page.on('Runtime.consoleAPICalled', (p) => {
      if (p.type !== 'error' && p.type !== 'assert') return;
      const args = (p.args as Array<{ value?: unknown; description?: string }>).map((a) => String(a.value ?? a.description ?? ''));
      this.lines.push(`console.${p.type}: ${args.join(' ')}`);
    });
    page.on('Log.entryAdded', (p) => {
      const entry = p.entry as { level: string; text: string; url?: string };
      if (entry.level === 'error') this.lines.push(`log: ${entry.text}${entry.url ? ` (${entry.url})` : ''}`);
    });
    page.on('Network.loadingFailed', (p) => {
      if (!p.canceled) this.lines.push(`failed load: ${String(p.errorText)} (${String(p.type)})`);
    });
  }

  clear(): void {
    this.lines.length = 0;
  }
}

export interface Browser {
  page: DevTools;
  problems: PageProblems;
  /** Loads a URL and waits for its load event. */
  open(url: string): Promise<void>;
  /** Ends Chromium and all its helper processes, and removes the profile. Safe to call twice. */
  close(): Promise<void>;
}

function devToolsUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`chromium did not open DevTools within ${timeoutMs} ms: ${seen.slice(-500)}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chromium exited (${code}) before DevTools opened: ${seen.slice(-500)}`));
    });
  });
}

/** Starts headless Chromium with one page of `width` x `height` CSS pixels at scale 1. */
export async function launchChromium(executable: string, viewport: { width: number; height: number }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'agentic-chromium-'));
  const args = [
    '--headless',
    '--disable-gpu',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-quic',
    '--disable-dev-shm-usage',
    '--remote-debugging-port=0',
    `--user-data-dir=${profile}`,
    `--window-size=${viewport.width},${viewport.height}`,
    // Chromium's sandbox refuses to start as root (containers, CI runners)
    ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    'about:blank',
  ];
  // its own process group, so the browser and every helper it forks end together
  const child = spawn(executable, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let closed = false;
  let page: DevTools | null = null;
  const close = async () => {
    if (closed) return;
    closed = true;
    page?.close();
    try {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
    await Promise.race([exited, Bun.sleep(5000)]);
    child.stderr?.destroy();
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    // a first start on a fresh machine (font caches, a new profile) beside a busy test file may
    // take over 15 s (the likeliest reading of a CI failure at 16 s, 2 cores); this limit is for hangs
    const browserUrl = await devToolsUrl(child, 60_000);
    const port = new URL(browserUrl).port;
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ type: string; webSocketDebuggerUrl: string }>;
    const target = targets.find((t) => t.type === 'page');
    if (!target) throw new Error('chromium opened no page');
    page = await DevTools.connect(target.webSocketDebuggerUrl);
    const problems = new PageProblems(page);
    for (const domain of ['Runtime', 'Log', 'Page', 'Network']) await page.send(`${domain}.enable`);
    await page.send('Emulation.setDeviceMetricsOverride', { width: viewport.width, height: viewport.height, deviceScaleFactor: 1, mobile: false });
    const opened = page;
    return {
      page: opened,
      problems,
      async open(url: string) {
        const loaded = opened.next('Page.loadEventFired');
        const { errorText } = await opened.send<{ errorText?: string }>('Page.navigate', { url });
        if (errorText) throw new Error(`cannot open ${url}: ${errorText}`);
        await loaded;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
