/**
 * The sandbox as a boundary: model-written code that first switches the Python audit hook off
 * (the second layer) is still contained by the kernel (bubblewrap's namespaces, the binds, the
 * resource limits), costs at most its own run, and leaves no process and no folder behind.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PythonRunOptions, type PythonRunResult, runPython, sandboxSupport } from '../../src/sandbox/python';
import { processesWith } from '../helpers';
import { missing } from '../system_tools';

/**
 * Switches the audit hook off from inside, without ctypes, then proves it is off (listing `/`
 * is one of the things the hook refuses). The first line is the one-liner (the old
 * prelude kept its guard in __main__); the loop reaches the hook's closure through the garbage
 * collector, which the hook does not guard.
 */
const HOOK_OFF = `
import sys, gc, os
try:
    sys.modules['__main__']._inside = True
except Exception:
    pass
for _f in gc.get_objects():
    if type(_f).__name__ == 'function' and _f.__name__ == '_audit' and _f.__closure__:
        for _c in _f.__closure__:
            if isinstance(_c.cell_contents, list):
                _c.cell_contents[0] = True
try:
    os.listdir('/')
except PermissionError as _e:
    print('HOOK STILL ON', _e)
    raise SystemExit(99)
`;

const quick = { timeoutMs: 5000, memoryMb: 256, maxOutputBytes: 4096 };
const hostile = (code: string, options: PythonRunOptions = {}) => runPython(`${HOOK_OFF}\n${code}`, { ...quick, ...options });

let tmp = '';
let savedTmpdir: string | undefined;
beforeAll(() => {
  // the runs' folders go here, so leftovers are this file's own (0700, as mktemp makes it: as root,
  // the sandbox user 65534 cannot enter it, and the sandbox still runs)
  savedTmpdir = process.env.TMPDIR;
  tmp = mkdtempSync(join(tmpdir(), 'agentic-containment-'));
  process.env.TMPDIR = tmp;
});
afterAll(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  rmSync(tmp, { recursive: true, force: true });
});

function runFolders(): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith('agentic-py-'));
}

/** The hook was off, the run cost at most its episode, and left no folder behind. */
function contained(run: PythonRunResult): PythonRunResult {
  expect(run.stdout).not.toContain('HOOK STILL ON');
  expect(run.exitCode).not.toBe(99);
  expect(run.durationMs).toBeLessThan(6000);
  expect(runFolders()).toEqual([]);
  return run;
}

describe.skipIf(missing('sandbox'))('python sandbox containment, with the audit hook switched off', () => {
  test('the hook can be switched off from inside (so the tests below test the kernel)', async () => {
    const run = contained(await hostile('print("off")'));
    expect(run.stdout.trim()).toBe('off');
  });

  test('the old one-line switch-off no longer reaches the hook', async () => {
    const run = await runPython(`import sys\nsys.modules['__main__']._inside = True\nimport os\nprint(os.listdir('/'))`, quick);
    expect(run.stderr).toContain('is not allowed');
  });

  test('/etc/passwd and /etc/shadow do not exist for the code', async () => {
    for (const path of ['/etc/passwd', '/etc/shadow']) {
      const run = contained(await hostile(`print(open(${JSON.stringify(path)}).read())`));
      console.log(`${path}: ${run.reason}: ${run.stderr.trim().split('\n').at(-1)}`);
      expect(run.stdout).not.toContain('root:');
      expect(run.reason).toBe('error');
      expect(run.stderr).toMatch(/FileNotFoundError|PermissionError/);
    }
  });

  test('a file elsewhere on the real filesystem, /root and the project folder are out of reach', async () => {
    const secretDir = mkdtempSync(join(tmpdir(), 'agentic-secret-'));
    const secret = join(secretDir, 'secret.txt');
    writeFileSync(secret, 'SECRET-7f3a');
    try {
      const file = contained(await hostile(`print(open(${JSON.stringify(secret)}).read())`));
      console.log(`secret file: ${file.reason}: ${file.stderr.trim().split('\n').at(-1)}`);
      expect(file.stdout).not.toContain('SECRET-7f3a');
      const project = contained(await hostile(`print(open(${JSON.stringify(join(process.cwd(), 'package.json'))}).read())`));
      console.log(`project folder: ${project.reason}: ${project.stderr.trim().split('\n').at(-1)}`);
      expect(project.stdout).not.toContain('agentic');
      const root = contained(await hostile(`import os\nprint(sorted(os.listdir('/root')) if os.path.isdir('/root') else [])`));
      console.log(`/root lists: ${root.stdout.trim()}`);
      // at most the path down to the interpreter (a pyenv under /root), never /root's own files
      const { python } = await sandboxSupport();
      const allowed = python.startsWith('/root/') ? [python.split('/')[2]] : [];
      const seen = JSON.parse(root.stdout.trim().replaceAll("'", '"') || '[]') as string[];
      for (const name of seen) expect(allowed).toContain(name);
    } finally {
      rmSync(secretDir, { recursive: true, force: true });
    }
  });

  test('writing outside the working folder fails', async () => {
    const marker = `agentic-escape-${crypto.randomUUID()}`;
    const targets = [join(tmp, marker), `/usr/${marker}`, `/tmp/${marker}`];
    try {
      const run = contained(
        await hostile(
          `for p in ${JSON.stringify(targets)}:\n    try:\n        open(p, 'w').write('x'); print('wrote', p)\n    except OSError as e:\n        print('refused', p, e.strerror)\nopen('kept.txt', 'w').write('ok')\nprint(open('kept.txt').read())`,
        ),
      );
      console.log(run.stdout.trim());
      expect(run.stdout).not.toContain('wrote');
      expect(run.stdout.trim().split('\n').at(-1)).toBe('ok');
      for (const target of targets) expect(existsSync(target)).toBe(false);
    } finally {
      for (const target of targets) rmSync(target, { force: true });
    }
  });

  test('forks stop at the process limit: a kernel limit, also when agentic runs as root', async () => {
    // at most 64 tries, so a sandbox without the limit does not flood the machine
    const code =
      'import os, time\nstarted = 0\nfor _ in range(64):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n' +
      '    if pid == 0:\n        time.sleep(3)\n        os._exit(0)\n    started += 1\nprint(started)';
    const run = contained(await hostile(code, { maxProcesses: 8 }));
    console.log(`forks started under maxProcesses=8: ${run.stdout.trim()}`);
    expect(Number(run.stdout.trim())).toBeLessThan(8);
    const threads = contained(
      await hostile(
        'import threading, time\nthreading.stack_size(65536)\nstarted = 0\ntry:\n    for _ in range(64):\n' +
          '        threading.Thread(target=time.sleep, args=(0.5,)).start()\n        started += 1\nexcept RuntimeError:\n    pass\nprint(started)',
        { maxProcesses: 8 },
      ),
    );
    console.log(`threads started under maxProcesses=8: ${threads.stdout.trim()}`);
    expect(Number(threads.stdout.trim())).toBeLessThan(8);
  });

  test('no TCP connection reaches a listener on loopback', async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const run = contained(await hostile(`import socket\ns = socket.create_connection(('127.0.0.1', ${port}), timeout=2)\nprint('connected')`));
      console.log(`loopback: ${run.reason}: ${run.stderr.trim().split('\n').at(-1)}`);
      expect(run.stdout).not.toContain('connected');
      expect(run.reason).toBe('error');
      await Bun.sleep(50);
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  test('no route to a public address (UDP connect: no packet is sent)', async () => {
    const run = contained(
      await hostile(
        "import socket, errno\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n    s.connect(('192.0.2.1', 53))\n    print('route')\nexcept OSError as e:\n    print(errno.errorcode.get(e.errno))",
      ),
    );
    console.log(`public address: ${run.stdout.trim()}`);
    expect(run.stdout.trim()).toBe('ENETUNREACH');
  });

  test('an endless loop ends at the time limit', async () => {
    const run = contained(await hostile('while True:\n    pass', { timeoutMs: 500 }));
    expect(run.reason).toBe('timeout');
  });

  test('a memory hog ends at the address-space limit', async () => {
    const run = contained(await hostile('chunks = []\nwhile True:\n    chunks.append(bytearray(10 * 2**20))', { memoryMb: 128 }));
    expect(run.reason).toBe('memory');
  });

  test('10 MB of output is cut at the byte limit and the run killed', async () => {
    const run = contained(await hostile('import sys\nsys.stdout.write("y" * 10_000_000)\nsys.stdout.flush()\nimport time\ntime.sleep(5)'));
    expect(run).toMatchObject({ reason: 'output', truncated: true });
    expect(Buffer.byteLength(run.stdout)).toBe(quick.maxOutputBytes);
  });

  test('a folder the code locks (chmod 0) is still removed', async () => {
    const run = contained(await hostile("import os\nos.makedirs('a/b')\nopen('a/b/f', 'w').write('x')\nos.chmod('a/b', 0)\nos.chmod('a', 0)\nprint('locked')"));
    expect(run.stdout.trim()).toBe('locked');
  });

  test('a daemon left running in the background dies with the run', async () => {
    const marker = `agentic-daemon-${crypto.randomUUID()}`;
    const code =
      'import os, sys\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n' +
      `        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)', ${JSON.stringify(marker)}])\n` +
      '    os._exit(0)\nimport time\ntime.sleep(0.3)\nprint("returned")';
    const run = contained(await hostile(code));
    expect(run.stdout.trim()).toBe('returned');
    let left = processesWith(marker);
    for (let i = 0; i < 20 && left.length > 0; i++) {
      await Bun.sleep(50);
      left = processesWith(marker);
    }
    console.log(`daemon processes left: ${left.length}`);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
  });
});
