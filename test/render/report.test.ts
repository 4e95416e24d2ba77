import { describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { episodesFileText, readEpisodesFile, type SavedEpisode } from '../../src/render/episodes_file';
import { reportPage, type ReportEpisode, type ReportInput } from '../../src/render/report';
import { transcriptText } from '../../src/render/transcript';
import type { TagSummary } from '../../src/rollout/report';
import { scratch } from '../helpers';

const SUMMARY: Record<string, TagSummary> = {
  FrozenLake: {
    episodes: 2,
    success: 0.5,
    score: { mean: 0.5, min: 0, max: 1 },
    action_is_valid: 1,
    num_actions: 3,
    response_length: Number.NaN,
    timed_out: 0,
    env_failure: 0,
    failed: 0,
    failures: { failed: 0, episodes: 2, kinds: [] },
  },
};

const EPISODE: ReportEpisode = {
  name: '001_FrozenLake_seed5',
  tag: 'FrozenLake',
  seed: 5,
  turns: 2,
  score: 1,
  success: 1,
  endReason: 'terminated',
  failure: null,
  gif: { bytes: Uint8Array.of(71, 73, 70), width: 240, height: 300 },
  transcript: 'response: <answer>Right</answer> & more',
};

function page(overrides: Partial<ReportInput> = {}): string {
  return reportPage({
    title: 'lake <run>',
    source: '2 episodes played by random actions.',
    curves: { path: '/x/metrics.jsonl', reports: null },
    summary: SUMMARY,
    episodes: [EPISODE],
    ...overrides,
  });
}

describe('report.html', () => {
  test('is one page with nothing to fetch: inline style, no scripts, the GIF as a data URI', () => {
    const html = page();
    expect(html).toStartWith('<!doctype html>');
    expect(html).not.toMatch(/<script|<link|src="(?!data:)|href="http/);
    expect(html).toContain(`src="data:image/gif;base64,${Buffer.from(EPISODE.gif!.bytes).toString('base64')}" width="240" height="300"`);
    // text is escaped, never markup
    expect(html).toContain('<title>lake &lt;run&gt;: rendered episodes</title>');
    expect(html).toContain('response: &lt;answer&gt;Right&lt;/answer&gt; &amp; more');
  });

  test('says plainly when there are no learning curves, and draws them when there are', () => {
    expect(page()).toContain('No learning curves: /x/metrics.jsonl does not exist');
    expect(page({ curves: { path: '/x/m.jsonl', reports: [{ step: 0, metrics: { 'time/step_total': 1 } }] } })).toContain(
      'holds 1 step(s) but none of the charted metrics',
    );
    const reports = [0, 1, 2].map((step) => ({
      step,
      metrics: { 'val/env/FrozenLake/success': step / 4, 'val/score/mean': step / 2, 'time/elapsed': step * 10 },
    }));
    const html = page({ curves: { path: '/x/m.jsonl', reports } });
    expect(html).toContain('From /x/m.jsonl (3 steps).');
    // validation success vs step and vs time, and validation score
    expect(html.match(/<svg /g)).toHaveLength(3);
    expect(html).toContain('validation success');
  });

  test('the metrics table has a row per tag; unknown values show as "-"', () => {
    const html = page();
    expect(html).toContain(
      '<td>FrozenLake</td><td>2</td><td>50.0%</td><td>0.500</td><td>0</td><td>1</td><td>100.0%</td><td>3.00</td><td>-</td><td>0.0%</td><td>0.0%</td><td>0.0%</td>',
    );
  });

  test('an env without pictures shows its transcript open instead', () => {
    const html = page({ episodes: [{ ...EPISODE, gif: null }] });
    expect(html).toContain('No picture: this env draws none.');
    expect(html).toContain('<details open><summary>transcript</summary>');
    expect(html).not.toContain('<img');
  });
});

describe('transcripts', () => {
  test('hold the instruction and every turn; a whitespace-only response is shown escaped', () => {
    const text = transcriptText(
      { tag: 'Lake', seed: 9, position: 'episode 1 of 1', source: 'replayed.' },
      {
        instruction: 'Cross the lake.',
        turns: [
          { observation: 'P_G', responseText: '<answer>Right</answer>', action: 'Right', reward: 0, metrics: { action_is_valid: true }, metricsAgg: {} },
          { observation: '_PG', responseText: '\n\n', action: null, reward: -0.1, metrics: { action_is_valid: false }, metricsAgg: {} },
        ],
        finalObservation: '_PG',
        endReason: 'max_actions',
        failure: null,
        frames: null,
        captions: [],
      },
    );
    expect(text).toStartWith('Lake, seed 9 (episode 1 of 1)\nsource: replayed.\n2 turns, score -0.1, ended: max_actions\n');
    expect(text).toContain('=== instruction\nCross the lake.');
    expect(text).toContain('=== turn 1\n--- observation\nP_G\n--- response\n<answer>Right</answer>\n---\naction: Right\nreward: 0');
    expect(text).toContain('--- response\n(only whitespace: "\\n\\n")\n---\naction: none (no valid action in the response)\nreward: -0.1');
    expect(text).toEndWith('--- final observation\n_PG\n---\nscore: -0.1\nended: max_actions\n');
  });
});

describe('saved episodes file', () => {
  const episode: SavedEpisode = {
    tag: 'Lake',
    seed: 3,
    turns: [{ responseText: '<answer>Up</answer>', observation: 'P', reward: 0, action: 'Up' }],
    endReason: 'max_actions',
    responseTokens: 5,
  };

  test('round-trips, and accepts extra fields (a rollout Episode as it is) and bare responses', () => {
    const dir = scratch();
    const path = join(dir, 'e.json');
    writeFileSync(path, episodesFileText([episode]));
    expect(readEpisodesFile(path)).toEqual([episode]);
    writeFileSync(path, JSON.stringify([{ tag: 'Lake', seed: 3, envId: 4, turns: [{ responseText: 'x', promptIds: [1, 2] }] }]));
    expect(readEpisodesFile(path)).toEqual([{ tag: 'Lake', seed: 3, turns: [{ responseText: 'x' }] }]);
  });

  test('every problem is one line naming the file and, where it can, the episode and field', () => {
    const dir = scratch();
    mkdirSync(join(dir, 'folder'));
    const cases: Array<[string | null, string]> = [
      [null, 'no such file'],
      ['{not json', 'not valid JSON ('],
      ['{"tag": "Lake"}', 'expected a JSON array of episodes, got object'],
      ['null', 'expected a JSON array of episodes, got null'],
      ['[]', 'holds no episodes'],
      ['[{"tag": "Lake", "seed": 1, "turns": [{"response": "x"}]}]', 'episode 1, turns[0].responseText: '],
      ['[{"tag": "Lake", "seed": 1, "turns": []}, {"tag": "Lake", "seed": -1, "turns": []}]', 'episode 2, seed: '],
      ['[{"tag": "Lake", "seed": 1, "turns": [], "endReason": "bored"}]', 'episode 1, endReason: '],
      ['["Lake"]', 'episode 1: '],
    ];
    for (const [text, message] of cases) {
      const path = join(dir, 'case.json');
      if (text === null) expect(() => readEpisodesFile(join(dir, 'missing.json'))).toThrow(`${join(dir, 'missing.json')}: ${message}`);
      else {
        writeFileSync(path, text);
        let thrown: Error | null = null;
        try {
          readEpisodesFile(path);
        } catch (error) {
          thrown = error as Error;
        }
        expect(thrown?.message).toStartWith(`${path}: ${message}`);
        expect(thrown?.message).not.toContain('\n');
        expect(thrown?.name).toBe('UsageError');
      }
    }
    expect(() => readEpisodesFile(join(dir, 'folder'))).toThrow('is a folder; expected a JSON file of episodes');
  });
});
