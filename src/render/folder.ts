/**
 * A render folder (render_save_dir): every saved episode replayed, and then, all at once,
 *
 *   report.html                       learning curves, metrics per tag, every episode
 *   episodes.json                     the episodes in the saved-episodes format (episodes_file.ts)
 *   episodes/NNN_<tag>_seed<S>.gif    the animation, for envs that draw pictures
 *   episodes/NNN_<tag>_seed<S>.txt    the transcript, for every env
 *
 * Nothing is written until every episode has replayed, and the folder is swapped in whole
 * (writeFolderAtomic), so a failed render leaves the previous one as it was.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { AgenticConfig } from '../config/schema';
import { firstLine, UsageError } from '../errors';
import type { PluginHost } from '../host/plugin_host';
import { episodeMetrics } from '../rollout/episode_record';
import { formatSummaryTable, summarizeByTag, type TagSummary } from '../rollout/report';
import { readMetricsJsonl } from '../tracking/jsonl';
import { writeFileAtomic, writeFolderAtomic } from '../util/atomic';
import { episodeAnimation } from './animation';
import { EPISODES_FILE, episodesFileText, type SavedEpisode } from './episodes_file';
import { replayEpisode, type Replay } from './replay';
import { reportPage, type ReportEpisode } from './report';
import { transcriptText } from './transcript';

export const REPORT_FILE = 'report.html';

export interface RenderOptions {
  /** One sentence on where the episodes came from, for the report and the transcripts. */
  source: string;
  /** Progress lines. */
  info?: (line: string) => void;
}

export interface RenderResult {
  folder: string;
  episodes: number;
  gifs: number;
  summary: Record<string, TagSummary>;
  table: string;
}

interface RenderedEpisode {
  saved: SavedEpisode;
  replay: Replay;
  report: ReportEpisode;
}

/**
 * Refuses a render_save_dir that holds something other than an earlier render, since the render
 * replaces the whole folder.
 */
export function checkRenderFolder(folder: string): void {
  const parent = dirname(folder);
  try {
    mkdirSync(parent, { recursive: true });
    accessSync(parent, constants.W_OK);
  } catch (error) {
    throw new UsageError(`render_save_dir: cannot write in ${parent}: ${firstLine(error)}`);
  }
  if (!existsSync(folder)) return;
  if (!statSync(folder).isDirectory()) throw new UsageError(`render_save_dir: ${folder} is a file, not a folder`);
  const entries = readdirSync(folder);
  if (entries.length > 0 && !entries.includes(REPORT_FILE) && !entries.includes(EPISODES_FILE)) {
    throw new UsageError(
      `render_save_dir: ${folder} holds files but no earlier render (no ${REPORT_FILE}); a render replaces the whole folder, so choose an empty or new one`,
    );
  }
}

const fileSafe = (text: string) => text.replace(/[^A-Za-z0-9_-]+/g, '_');

function savedFrom(saved: SavedEpisode, replay: Replay): SavedEpisode {
  return {
    tag: saved.tag,
    seed: saved.seed,
    // what the reset needs besides the seed, so the episodes file it writes replays again
    ...(saved.draw === undefined ? {} : { draw: saved.draw }),
    ...(saved.suiteEpisode === undefined ? {} : { suiteEpisode: saved.suiteEpisode }),
    instruction: replay.instruction,
    // an env that does not say which action it parsed gets no action field, not null ("none parsed")
    turns: replay.turns.map((t) => ({
      observation: t.observation,
      responseText: t.responseText,
      ...(t.action === undefined ? {} : { action: t.action }),
      reward: t.reward,
    })),
    finalObservation: replay.finalObservation,
    endReason: replay.endReason,
    ...(replay.failure === null ? {} : { failure: replay.failure }),
    score: replay.turns.reduce((sum, t) => sum + t.reward, 0),
    ...(saved.responseTokens === undefined ? {} : { responseTokens: saved.responseTokens }),
  };
}

async function renderOne(config: AgenticConfig, host: PluginHost, saved: SavedEpisode, index: number, count: number, source: string): Promise<RenderedEpisode> {
  const name = `${String(index + 1).padStart(3, '0')}_${fileSafe(saved.tag)}_seed${saved.seed}`;
  const replay = await replayEpisode(config, host, saved, `episode ${index + 1} (${saved.tag}, seed ${saved.seed})`);
  const gif: ReportEpisode['gif'] = episodeAnimation(replay);
  const metrics = episodeMetrics(replay.turns, replay.endReason);
  return {
    saved: savedFrom(saved, replay),
    replay,
    report: {
      name,
      tag: saved.tag,
      seed: saved.seed,
      turns: replay.turns.length,
      score: replay.turns.reduce((sum, t) => sum + t.reward, 0),
      success: metrics.success,
      endReason: replay.endReason,
      failure: replay.failure,
      gif,
      transcript: transcriptText({ tag: saved.tag, seed: saved.seed, position: `episode ${index + 1} of ${count}`, source }, replay),
    },
  };
}

/** Replays `episodes` and writes the render folder (config.render_save_dir). */
export async function renderToFolder(
  config: AgenticConfig,
  host: PluginHost,
  episodes: readonly SavedEpisode[],
  options: RenderOptions,
): Promise<RenderResult> {
  if (config.render_save_dir === null) throw new UsageError('render_save_dir: null, so there is no folder to render to; give one with render_save_dir=DIR');
  const folder = resolve(config.render_save_dir);
  checkRenderFolder(folder);
  const info = options.info ?? (() => {});
  const rendered: RenderedEpisode[] = [];
  for (const [i, saved] of episodes.entries()) {
    const one = await renderOne(config, host, saved, i, episodes.length, options.source);
    rendered.push(one);
    const frames = one.replay.frames ? `, ${one.replay.frames.length} frames` : ', no picture';
    info(`rendered ${i + 1}/${episodes.length}: ${saved.tag} seed ${saved.seed}, ${one.report.turns} turns, score ${+one.report.score.toFixed(3)}${frames}`);
  }
  const summary = summarizeByTag({
    episodes: rendered.map(({ saved, replay, report }) => ({
      tag: report.tag,
      score: report.score,
      metrics: episodeMetrics(replay.turns, replay.endReason),
      endReason: replay.endReason,
      failure: replay.failure,
      turns: replay.turns,
      // unknown for a saved episode without its count: NaN shows as "-", never as 0 tokens
      responseTokens: saved.responseTokens ?? Number.NaN,
    })),
  });
  const metricsPath = join(resolve(config.logging_dir), 'metrics.jsonl');
  const curves = { path: metricsPath, reports: existsSync(metricsPath) ? readMetricsJsonl(metricsPath) : null };
  const page = reportPage({ title: config.exp_name, source: options.source, curves, summary, episodes: rendered.map((r) => r.report) });
  await writeFolderAtomic(folder, (temporary) => {
    for (const { report } of rendered) {
      if (report.gif) writeFileAtomic(join(temporary, 'episodes', `${report.name}.gif`), report.gif.bytes);
      writeFileAtomic(join(temporary, 'episodes', `${report.name}.txt`), report.transcript);
    }
    writeFileAtomic(join(temporary, EPISODES_FILE), episodesFileText(rendered.map((r) => r.saved)));
    writeFileAtomic(join(temporary, REPORT_FILE), page);
  });
  return { folder, episodes: rendered.length, gifs: rendered.filter((r) => r.report.gif).length, summary, table: formatSummaryTable(summary) };
}
