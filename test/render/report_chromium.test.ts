/**
 * The render's report in a real browser: a short render (random actions on FrozenLake, and a small
 * metrics.jsonl for the curves) opened in headless Chromium, which must load it with no console
 * error, no exception and no failed load, show the curves (SVG) and every episode (a GIF that
 * decodes, a transcript), and decode our GIFs to exactly the pixels we encoded. A screenshot is
 * kept as an artifact and checked to be a PNG of the viewport's size that is not blank.
 *
 * Without Chromium the test is skipped (test/system_tools.ts); under CI a missing Chromium fails it.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';
import { loadConfig } from '../../src/config/load';
import type { AgenticConfig } from '../../src/config/schema';
import { Rng } from '../../src/engine/rng';
import { PluginHost } from '../../src/host/plugin_host';
import type { RgbFrame } from '../../src/sdk/types';
import { captionFrames } from '../../src/render/caption';
import { readEpisodesFile } from '../../src/render/episodes_file';
import { renderToFolder } from '../../src/render/folder';
import { encodeGif } from '../../src/render/gif';
import { replayEpisode } from '../../src/render/replay';
import { evaluate } from '../../src/rollout/evaluate';
import { ROOT, scratch } from '../helpers';
import { missing } from '../system_tools';
import { findChromium, launchChromium, type Browser } from './chromium';

const chromium = findChromium();
const VIEWPORT = { width: 1200, height: 1400 };
const ARTIFACT = join(tmpdir(), 'agentic-test-artifacts', 'report_chromium.png');

/** A PNG's size and its pixels as RGBA, decoded just enough to judge a screenshot (8-bit RGB/RGBA, no interlace). */
function readPng(bytes: Uint8Array): { width: number; height: number; rgba: Uint8Array } {
  const signature = [137, 80, 78, 71, 13, 10, 26, 10];
  if (!signature.every((b, i) => bytes[i] === b)) throw new Error('not a PNG signature');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Uint8Array[] = [];
  while (at < bytes.length) {
    const length = view.getUint32(at);
    const type = new TextDecoder().decode(bytes.subarray(at + 4, at + 8));
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, colourType, , , interlace] = data.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colourType !== 2 && colourType !== 6))
        throw new Error(`unexpected PNG format: depth ${depth}, colour type ${colourType}, interlace ${interlace}`);
      channels = colourType === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG data holds ${raw.length} bytes, expected ${height * (stride + 1)}`);
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const corner = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      const p = left + up - corner;
      const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - corner)];
      const predictor = [0, left, up, (left + up) >> 1, pa <= pb && pa <= pc ? left : pb <= pc ? up : corner][filter];
      if (predictor === undefined) throw new Error(`PNG filter ${filter}`);
      pixels[y * stride + x] = (line[x]! + predictor) & 0xff;
    }
  }
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba.set(pixels.subarray(i * channels, i * channels + 3), i * 4);
    rgba[i * 4 + 3] = channels === 4 ? pixels[i * channels + 3]! : 255;
  }
  return { width, height, rgba };
}

function distinctColours(rgba: Uint8Array): number {
  const seen = new Set<number>();
  for (let i = 0; i < rgba.length; i += 4) seen.add((rgba[i]! << 16) | (rgba[i + 1]! << 8) | rgba[i + 2]!);
  return seen.size;
}

/** Draws an image (a data URL) on a canvas in the page and returns its RGBA pixels, base64. */
const CANVAS_PIXELS = `async (src) => {
  const image = new Image();
  image.src = src;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let text = '';
  for (let i = 0; i < data.length; i += 8192) text += String.fromCharCode(...data.subarray(i, i + 8192));
  return { width: canvas.width, height: canvas.height, pixels: btoa(text) };
}`;

function rgbOf(rgba: Uint8Array): Uint8Array {
  const rgb = new Uint8Array((rgba.length / 4) * 3);
  for (let i = 0; i < rgba.length / 4; i++) rgb.set(rgba.subarray(i * 4, i * 4 + 3), i * 3);
  return rgb;
}

async function shortRender(): Promise<{ reportPath: string; folder: string; config: AgenticConfig; host: PluginHost }> {
  const dir = scratch({
    'logs/metrics.jsonl': `${[0, 1, 2, 3, 4]
      .map((step) =>
        JSON.stringify({
          step,
          metrics: {
            'val/env/FrozenLake/success': [0.1, 0.2, 0.35, 0.3, 0.5][step],
            'rollout/score/mean': step / 8,
            'actor/entropy': 2 - step / 5,
            'time/elapsed': 6 * step,
          },
        }),
      )
      .join('\n')}\n`,
  });
  const host = new PluginHost();
  const { config } = await loadConfig(
    {
      configPath: join(ROOT, 'configs'),
      configName: 'frozen_lake',
      overrides: [`output_dir=${dir}`, 'val_env_manager.llm_proxy.proxy_type=random', 'custom_envs.FrozenLake.max_steps=4'],
    },
    host,
  );
  const played = await evaluate(config, host, () => {}, 3);
  const episodes = played.batch.episodes.map((e) => ({ tag: e.tag, seed: e.seed, turns: e.turns, endReason: e.endReason, responseTokens: e.responseTokens }));
  const result = await renderToFolder(config, host, episodes, { source: '3 validation episodes played by random actions.' });
  return { reportPath: join(result.folder, 'report.html'), folder: result.folder, config, host };
}

let browser: Browser | null = null;
afterAll(async () => {
  await browser?.close();
});

describe('report.html in headless Chromium', () => {
  test.skipIf(missing('chromium'))(
    'loads with no errors, shows the curves and every episode, decodes our GIFs exactly; screenshot kept',
    async () => {
      const { reportPath, folder, config, host } = await shortRender();
      browser = await launchChromium(chromium!, VIEWPORT);
      const { page, problems } = browser;

      // first, show that the collector sees a broken page: an exception, a console error, a missing file
      const broken = join(
        scratch({ 'broken.html': '<img src="missing.png"><script>console.error("deliberate"); throw new Error("thrown on purpose")</script>' }),
        'broken.html',
      );
      await browser.open(pathToFileURL(broken).href);
      // each report comes on its own DevTools event: wait for all four, so none lands after clear()
      const reported = () =>
        [/^exception:.*thrown on purpose/, /^console\.error: deliberate$/, /^failed load:/, /^log: Failed to load resource/].every((line) =>
          problems.lines.some((l) => line.test(l)),
        );
      for (let waited = 0; !reported() && waited < 10_000; waited += 50) await Bun.sleep(50);
      expect(problems.lines.some((l) => l.startsWith('exception:') && l.includes('thrown on purpose'))).toBe(true);
      expect(problems.lines).toContain('console.error: deliberate');
      expect(problems.lines.some((l) => l.startsWith('failed load:'))).toBe(true);
      problems.clear();

      await browser.open(pathToFileURL(reportPath).href);
      const decoded = await page.evaluate<boolean[]>('Promise.all([...document.images].map((i) => i.decode().then(() => true, () => false)))');
      expect(decoded).toEqual([true, true, true]);
      const seen = await page.evaluate<{ svgs: number; paths: number; images: Array<[number, number]>; transcripts: string[]; rows: string[] }>(`({
        svgs: document.querySelectorAll('#curves svg').length,
        paths: document.querySelectorAll('#curves svg path').length,
        images: [...document.querySelectorAll('#episodes img.frames')].map((i) => [i.naturalWidth, i.naturalHeight]),
        transcripts: [...document.querySelectorAll('#episodes pre.transcript')].map((p) => p.textContent),
        rows: [...document.querySelectorAll('#metrics tbody tr')].map((r) => r.textContent),
      })`);
      // validation success vs step and vs time, training score, actor entropy
      expect(seen.svgs).toBe(4);
      expect(seen.paths).toBe(4);
      expect(seen.images).toHaveLength(3);
      for (const [width, height] of seen.images) {
        expect(width).toBe(240);
        expect(height).toBeGreaterThan(240);
      }
      expect(seen.transcripts).toHaveLength(3);
      for (const text of seen.transcripts) expect(text).toMatch(/^FrozenLake, seed \d+ \(episode \d of 3\)\n[\s\S]*=== turn 1\n--- observation\n/);
      expect(seen.rows).toHaveLength(1);
      expect(seen.rows[0]).toStartWith('FrozenLake3');

      // Chromium's own GIF decoder against ours: a noise picture of 256 colours (the LZW table
      // fills and restarts many times) comes back pixel for pixel...
      const rng = Rng.fromSeed(1, 'chromium-gif');
      const exact: RgbFrame = { width: 97, height: 61, data: new Uint8Array(97 * 61 * 3) };
      const palette = Array.from({ length: 256 }, () => [rng.int(256), rng.int(256), rng.int(256)]);
      for (let i = 0; i < 97 * 61; i++) exact.data.set(palette[rng.int(256)]!, i * 3);
      const gifUrl = (frame: RgbFrame) => `data:image/gif;base64,${Buffer.from(encodeGif([frame], { delays: 10 })).toString('base64')}`;
      const drawn = await page.evaluate<{ width: number; height: number; pixels: string }>(`(${CANVAS_PIXELS})(${JSON.stringify(gifUrl(exact))})`);
      expect([drawn.width, drawn.height]).toEqual([97, 61]);
      expect(rgbOf(Buffer.from(drawn.pixels, 'base64'))).toEqual(exact.data);
      // ...and an episode's animation shows one of the frames we encoded
      const saved = readEpisodesFile(join(folder, 'episodes.json'));
      const replay = await replayEpisode(config, host, saved[0]!);
      const frames = captionFrames(replay.frames!, replay.captions);
      const src = await page.evaluate<string>("document.querySelector('#episodes img.frames').src");
      const shown = await page.evaluate<{ width: number; height: number; pixels: string }>(`(${CANVAS_PIXELS})(${JSON.stringify(src)})`);
      const shownRgb = Buffer.from(rgbOf(Buffer.from(shown.pixels, 'base64')));
      expect(frames.some((f) => Buffer.from(f.data).equals(shownRgb))).toBe(true);

      const { data } = await page.send<{ data: string }>('Page.captureScreenshot', { format: 'png' });
      const png = Buffer.from(data, 'base64');
      mkdirSync(join(ARTIFACT, '..'), { recursive: true });
      writeFileSync(ARTIFACT, png);
      const shot = readPng(png);
      expect([shot.width, shot.height]).toEqual([VIEWPORT.width, VIEWPORT.height]);
      // text, curves in several colours and the lake's tiles: far from a blank page
      expect(distinctColours(shot.rgba)).toBeGreaterThan(50);

      expect(problems.lines).toEqual([]);
    },
    120_000,
  );
});
