/**
 * `agentic play` at a real terminal: each session runs in a detached tmux pane, the test types
 * into it with send-keys and reads it with capture-pane. A person plays FrozenLake to the goal;
 * Ctrl-C quits with one line and saves nothing; Ctrl-D saves the turns played; a model waits for
 * Enter before each of its turns.
 *
 * Without tmux the tests are skipped (test/system_tools.ts); under CI a missing tmux fails them.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, scratch } from '../helpers';
import { missing } from '../system_tools';

setDefaultTimeout(60_000);

const tmux = Bun.which('tmux');

/** Seed 20 of the default FrozenLake, as in play.test.ts: this board, and these moves to the goal. */
const LAKE_20 = '__PO\n_OO_\n____\n___G';
const PATH_20 = ['Left', 'Left', 'Down', 'Down', 'Down', 'Right', 'Right', 'Right'];

const dir = scratch({ 'tmux.conf': 'set -g history-limit 50000\n' });
// a server of our own, so the test never touches a person's tmux sessions
const socket = `agentic-play-test-${process.pid}`;

function run(args: string[]): string {
  const done = Bun.spawnSync([tmux!, '-L', socket, '-f', join(dir, 'tmux.conf'), ...args], { stdout: 'pipe', stderr: 'pipe' });
  if (done.exitCode !== 0) throw new Error(`tmux ${args[0]}: ${done.stderr.toString().trim()}`);
  return done.stdout.toString();
}

/** Starts `agentic play ARGS` in a new pane; the pane then says `[exit N]`, `[tty ...]`, and stays open. */
function start(name: string, args: string[]): void {
  const words = [process.execPath, join(ROOT, 'src/cli/main.ts'), 'play', ...args].map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(' ');
  // after the exit, the terminal's line mode and echo: readline must have given them back
  const script = `cd '${ROOT}' && NO_COLOR=1 AGENTIC_WASM_THREADS=1 ${words}; echo "[exit $?]"; echo "[tty $(stty -a | grep -oE -- '-?icanon|-?echo\\b' | tr '\\n' ' ')]"; sleep 600`;
  run(['new-session', '-d', '-s', name, '-x', '160', '-y', '50', script]);
}

/** The whole pane, scrollback included, wrapped lines joined. */
function screen(name: string): string {
  return run(['capture-pane', '-p', '-J', '-S', '-', '-t', name]);
}

async function waitFor(name: string, what: string, check: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = screen(name);
    if (check(text)) return text;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}; the pane shows:\n${text.trimEnd().split('\n').slice(-25).join('\n')}`);
    await Bun.sleep(100);
  }
}

const count = (text: string, needle: string) => text.split(needle).length - 1;
const prompts = (name: string, n: number) => waitFor(name, `prompt ${n}`, (t) => count(t, 'response> ') >= n);

afterAll(() => {
  if (tmux) Bun.spawnSync([tmux, '-L', socket, 'kill-server'], { stdout: 'ignore', stderr: 'ignore' });
});

describe.skipIf(missing('tmux'))('agentic play in tmux', () => {
  test('a person plays FrozenLake to the goal, typing one move per turn', async () => {
    const out = join(dir, 'goal.json');
    start('goal', ['FrozenLake', 'seed=20', '--out', out]);
    for (const [i, move] of PATH_20.entries()) {
      await prompts('goal', i + 1);
      run(['send-keys', '-t', 'goal', '-l', `<answer>${move}</answer>`]);
      run(['send-keys', '-t', 'goal', 'Enter']);
    }
    const text = await waitFor('goal', 'the end of the episode', (t) => t.includes('[exit '));
    writeFileSync(join(dir, 'goal.pane.txt'), text);
    expect(text).toContain('[exit 0]');
    expect(text).toContain(`--- observation\n${LAKE_20}\n`);
    expect(text).toContain('response> <answer>Right</answer>\n--- step\naction: Right (valid)\nreward: 1');
    expect(text).toContain('=== episode over after 8 turns: terminated');
    expect(text).toContain('score: 1 (success)');
    expect(text).toContain(`saved the trajectory to ${out}`);
    const [episode] = JSON.parse(readFileSync(out, 'utf8'));
    expect(episode).toMatchObject({ tag: 'FrozenLake', seed: 20, endReason: 'terminated', score: 1, policy: 'you' });
    expect(episode.turns.map((t: { action: string }) => t.action)).toEqual(PATH_20);
    expect(episode.finalObservation).toBe('___O\n_OO_\n____\n___√');
  });

  test('Ctrl-C at the prompt: one line, exit 130, nothing saved, the terminal left as it was', async () => {
    const out = join(dir, 'interrupted.json');
    start('interrupt', ['FrozenLake', 'seed=20', '--out', out]);
    await prompts('interrupt', 1);
    run(['send-keys', '-t', 'interrupt', '-l', '<answer>Le']);
    run(['send-keys', '-t', 'interrupt', 'C-c']);
    const text = await waitFor('interrupt', 'the exit', (t) => t.includes('[exit '));
    expect(text).toContain('error: interrupted; nothing saved\n[exit 130]');
    await waitFor('interrupt', 'the terminal modes', (t) => t.includes('[tty '));
    expect(screen('interrupt')).toContain('[tty icanon echo ]');
    expect(text).not.toContain('    at ');
    expect(existsSync(out)).toBe(false);
  });

  test('Ctrl-D at the prompt ends the input: the turns played are saved, exit 1, the terminal as it was', async () => {
    const out = join(dir, 'eof.json');
    start('eof', ['FrozenLake', 'seed=20', '--out', out]);
    await prompts('eof', 1);
    run(['send-keys', '-t', 'eof', '-l', '<answer>Left</answer>']);
    run(['send-keys', '-t', 'eof', 'Enter']);
    await prompts('eof', 2);
    run(['send-keys', '-t', 'eof', 'C-d']);
    const text = await waitFor('eof', 'the exit', (t) => t.includes('[exit '));
    expect(text).toContain(`error: the input ended (Ctrl-D) at turn 2, before the episode ended; saved the 1 turn played to ${out}\n[exit 1]`);
    expect(await waitFor('eof', 'the terminal modes', (t) => t.includes('[tty '))).toContain('[tty icanon echo ]');
    const [episode] = JSON.parse(readFileSync(out, 'utf8'));
    expect(episode.turns.map((t: { action: string }) => t.action)).toEqual(['Left']);
    expect(episode.stopped).toBe('the responses ran out at turn 2');
  });

  test('a model waits for Enter before each of its turns', async () => {
    const out = join(dir, 'model.json');
    start('model', [
      'FrozenLake',
      'seed=20',
      'pretrain=agentic:tiny',
      'custom_envs.FrozenLake.max_steps=2',
      'custom_envs.FrozenLake.max_tokens_per_step=4',
      '--out',
      out,
    ]);
    const waiting = "[Enter] for the model's response> ";
    await waitFor('model', 'the first wait', (t) => count(t, waiting) === 1);
    await Bun.sleep(300);
    // nothing moves until the key
    expect(count(screen('model'), '--- step')).toBe(0);
    run(['send-keys', '-t', 'model', 'Enter']);
    await waitFor('model', 'the second wait', (t) => count(t, waiting) === 2 && count(t, '--- step') === 1);
    run(['send-keys', '-t', 'model', 'Enter']);
    const text = await waitFor('model', 'the exit', (t) => t.includes('[exit '));
    expect(text).toContain('=== episode over after 2 turns: max_actions');
    expect(text).toContain('[exit 0]');
    expect(JSON.parse(readFileSync(out, 'utf8'))[0]).toMatchObject({ logProbSource: 'sampled', turns: [{}, {}] });
  });
});
