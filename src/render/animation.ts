/** An episode's replayed pictures as one captioned, looping GIF: for the render folder and TensorBoard. */
import { captionFrames } from './caption';
import { encodeGif } from './gif';
import type { Replay } from './replay';

/** Hundredths of a second each frame shows; the last one stays longer before the loop restarts. */
export const FRAME_DELAY_CS = 70;
export const LAST_FRAME_DELAY_CS = 250;

export interface Animation {
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** Null when the env draws no pictures. */
export function episodeAnimation(replay: Pick<Replay, 'frames' | 'captions'>): Animation | null {
  if (!replay.frames || replay.frames.length === 0) return null;
  const frames = captionFrames(replay.frames, replay.captions);
  const delays = frames.map((_, i) => (i === frames.length - 1 ? LAST_FRAME_DELAY_CS : FRAME_DELAY_CS));
  return { bytes: encodeGif(frames, { delays }), width: frames[0]!.width, height: frames[0]!.height };
}
