import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runPython } from '../../src/sandbox/python';
import { missing } from '../system_tools';

const withSandbox = test.skipIf(missing('sandbox'));
const withPython = test.skipIf(missing('python'));

const runFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('agentic-py-'));

const quick = { timeoutMs: 5000, memoryMb: 256, maxOutputBytes: 4096 };

describe('python sandbox', () => {
  withSandbox('runs code and returns its output, exit status and reason', async () => {
    const ok = await runPython('import sys\nprint("hello", 6 * 7)\nprint("note", file=sys.stderr)', quick);
    expect(ok).toMatchObject({ stdout: 'hello 42\n', stderr: 'note\n', exitCode: 0, reason: 'ok', timedOut: false, truncated: false });
    const failed = await runPython('def f():\n    raise ValueError("bad value")\nf()', quick);
    expect(failed.exitCode).toBe(1);
    expect(failed.reason).toBe('error');
    // the traceback names the user's file and lines, not the sandbox's own code
    expect(failed.stderr).toContain('File "main.py", line 2, in f');
    expect(failed.stderr).toContain('ValueError: bad value');
    expect(failed.stderr).not.toContain('<string>');
    expect((await runPython('import sys; sys.exit(3)', quick)).exitCode).toBe(3);
  });

  withSandbox('feeds stdin, provides files, runs in /work (also HOME), and removes its folder afterwards', async () => {
    const before = runFolders();
    const run = await runPython('import os\nprint(input()[::-1])\nprint(open("data/in.txt").read())\nprint(os.getcwd(), os.environ["HOME"])', {
      ...quick,
      stdin: 'abc\n',
      files: { 'data/in.txt': 'payload' },
    });
    expect(run.stdout.trim().split('\n')).toEqual(['cba', 'payload', '/work /work']);
    expect(runFolders().filter((name) => !before.includes(name))).toEqual([]);
  });

  withSandbox('a fork bomb is contained', async () => {
    const run = await runPython('import os\nwhile True:\n    os.fork()', quick);
    expect(run.reason).toBe('error');
    expect(run.stderr).toContain('creating processes is not allowed');
    const viaMultiprocessing = await runPython('import multiprocessing as mp\nctx = mp.get_context("spawn")\np = ctx.Process(target=print)\np.start()', quick);
    expect(viaMultiprocessing.stderr).toContain('creating processes is not allowed');
  });

  withSandbox('the process count is a kernel limit of each run, also as root (threads count too)', async () => {
    const code =
      // the threads wait until every start was tried (a sleep could end first on a busy machine, freeing its slot)
      'import threading\nthreading.stack_size(65536)\nrelease = threading.Event()\nstarted = 0\ntry:\n    for _ in range(60):\n' +
      '        threading.Thread(target=release.wait, args=(10,)).start()\n        started += 1\nexcept RuntimeError:\n    pass\nrelease.set()\nprint(started)';
    const runs = await Promise.all([1, 2].map(() => runPython(code, { ...quick, maxProcesses: 16 })));
    // each run has its own count: both start nearly 16, not 16 between them
    for (const run of runs) expect(Number(run.stdout.trim())).toBeWithin(8, 16);
  });

  withSandbox('an infinite loop is stopped at the wall-clock limit', async () => {
    const run = await runPython('while True:\n    pass', { ...quick, timeoutMs: 400 });
    expect(run).toMatchObject({ reason: 'timeout', timedOut: true, exitCode: null });
    expect(run.durationMs).toBeLessThan(3000);
  });

  withSandbox('the CPU-time limit ends a busy loop', async () => {
    const run = await runPython('while True:\n    pass', { ...quick, cpuSeconds: 1 });
    expect(run.reason).toBe('cpu');
    expect(run.timedOut).toBe(false);
  });

  withSandbox('huge output is truncated at the byte limit and the run killed', async () => {
    const run = await runPython('while True:\n    print("y" * 1000)', { ...quick, maxOutputBytes: 2000 });
    expect(run).toMatchObject({ reason: 'output', truncated: true });
    expect(Buffer.byteLength(run.stdout)).toBe(2000);
    expect(run.durationMs).toBeLessThan(3000);
  });

  withSandbox('a memory hog is stopped at the address-space limit', async () => {
    const run = await runPython('chunks = []\nwhile True:\n    chunks.append(bytearray(10 * 2**20))', { ...quick, memoryMb: 128 });
    expect(run.reason).toBe('memory');
    expect(run.stderr).toContain('MemoryError');
  });

  withSandbox('reading or writing outside the working folder is refused', async () => {
    const read = await runPython('print(open("/etc/passwd").read())', quick);
    expect(read.stdout).toBe('');
    expect(read.stderr).toContain("PermissionError: sandbox: reading '/etc/passwd' is not allowed");
    const listing = await runPython('import os\nprint(os.listdir("/"))', quick);
    expect(listing.stderr).toContain('is not allowed');
    const escape = await runPython('print(open("../main.py").read())', quick);
    expect(escape.stderr).toContain('is not allowed');
    const write = await runPython('open("/tmp/agentic-sandbox-escape.txt", "w").write("x")', quick);
    expect(write.stderr).toContain('writing');
    expect(existsSync('/tmp/agentic-sandbox-escape.txt')).toBe(false);
    const link = await runPython('import os\nos.symlink("/etc/passwd", "p")\nprint(open("p").read())', quick);
    expect(link.stderr).toContain('creating links is not allowed');
    const inside = await runPython('open("notes.txt", "w").write("kept")\nprint(open("notes.txt").read())', quick);
    expect(inside.stdout).toBe('kept\n');
  });

  withSandbox('network connections are refused', async () => {
    // loopback only: no test ever opens a TCP connection to another address
    const run = await runPython('import socket\nsocket.create_connection(("127.0.0.1", 9), timeout=2)\nprint("connected")', quick);
    expect(run.stdout).toBe('');
    expect(run.reason).toBe('error');
    expect(run.stderr).toContain('network access is not allowed');
  });

  withSandbox('runs at the same time: 8 concurrent runs overlap', async () => {
    const runs = await Promise.all(Array.from({ length: 8 }, () => runPython('import time\ntime.sleep(0.4)\nprint("done")', quick)));
    for (const run of runs) expect(run.stdout).toBe('done\n');
    const lastStart = Math.max(...runs.map((r) => r.startedAt));
    const firstEnd = Math.min(...runs.map((r) => r.endedAt));
    expect(lastStart).toBeLessThan(firstEnd); // every run was alive at the same moment
  });

  withSandbox('an abort signal kills the run', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const run = await runPython('while True:\n    pass', { ...quick, signal: controller.signal });
    expect(run.reason).toBe('aborted');
    expect(run.durationMs).toBeLessThan(3000);
    const already = await runPython('print(1)', { ...quick, signal: AbortSignal.abort() });
    expect(already.reason).toBe('aborted');
  });

  withPython('python_sandbox=unconfined runs without bwrap: the real folder, and the audit hook still answers', async () => {
    const run = await runPython('import os\nprint(os.getcwd())\nopen("/etc/passwd").read()', { ...quick, sandbox: 'unconfined' });
    expect(run.stdout.trim()).toStartWith(tmpdir());
    expect(run.stdout.trim()).toEndWith('/work');
    expect(run.stderr).toContain("sandbox: reading '/etc/passwd' is not allowed");
  });

  test('bad options are clear errors', async () => {
    await expect(runPython('print(1)', { timeoutMs: 0 })).rejects.toThrow('timeoutMs must be a positive number');
    await expect(runPython('print(1)', { files: { '../x.py': '' } })).rejects.toThrow("file name '../x.py'");
    await expect(runPython('print(1)', { files: { 'main.py': '' } })).rejects.toThrow("file name 'main.py'");
  });
});
