/**
 * Where a row's thinking and its answer are: the response tokens inside `<think>…</think>` and
 * inside `<answer>…</answer>`. With `think_credit: false` the trainer gives the thinking no
 * advantage, so the policy gradient shapes only the decision that follows, and the KL loss alone
 * keeps the thinking near the reference's (a warm-started reading of the board, say, that RL would
 * otherwise drift into a second decision). `kl_loss_tokens: think | outside_answer` and
 * `entropy_loss_tokens: answer | outside_think` narrow those terms to one span or all but one.
 */
import { beginsContent, logProbTemperature, type SamplingParams } from '../model/sampling';

const SPANS = { think: /<think>([\s\S]*?)(?:<\/think>|$)/g, answer: /<answer>([\s\S]*?)(?:<\/answer>|$)/g } as const;

/**
 * 1 for each token of `ids` that is part of a response (`mask`) and shows at least one character of
 * a think span's content. Each run of response tokens (one turn) is read on its own; an unclosed
 * span runs to the end of its turn.
 */
export function thinkTokenMask(ids: Int32Array, mask: Uint8Array, pieceOf: (id: number) => string): Uint8Array {
  return spanTokenMask(ids, mask, pieceOf, 'think');
}

/** As thinkTokenMask, for the content of `<answer>…</answer>`: the decision itself, without its tags. */
export function answerTokenMask(ids: Int32Array, mask: Uint8Array, pieceOf: (id: number) => string): Uint8Array {
  return spanTokenMask(ids, mask, pieceOf, 'answer');
}

/**
 * 1 for each response token that is not part of an answer's content (answerTokenMask): the
 * thinking, the tags and the end of turn.
 */
export function outsideAnswerTokenMask(ids: Int32Array, mask: Uint8Array, pieceOf: (id: number) => string): Uint8Array {
  const answer = answerTokenMask(ids, mask, pieceOf);
  return mask.map((m, t) => (m && !answer[t] ? 1 : 0));
}

/**
 * 1 for each response token that does not show the thinking's content (thinkTokenMask): the
 * decision in whatever form the env asks for it (`<answer>Down</answer>`, TextArena's `[5]`), the
 * tags and the end of turn.
 */
export function outsideThinkTokenMask(ids: Int32Array, mask: Uint8Array, pieceOf: (id: number) => string): Uint8Array {
  const think = thinkTokenMask(ids, mask, pieceOf);
  return mask.map((m, t) => (m && !think[t] ? 1 : 0));
}

function spanTokenMask(ids: Int32Array, mask: Uint8Array, pieceOf: (id: number) => string, tag: keyof typeof SPANS): Uint8Array {
  const inside = new Uint8Array(ids.length);
  let t = 0;
  while (t < ids.length) {
    if (!mask[t]) {
      t++;
      continue;
    }
    const start = t;
    while (t < ids.length && mask[t]) t++;
    const ends: number[] = [];
    let text = '';
    for (let k = start; k < t; k++) {
      text += pieceOf(ids[k]!);
      ends.push(text.length);
    }
    for (const match of text.matchAll(SPANS[tag])) {
      const from = match.index + `<${tag}>`.length;
      const to = from + match[1]!.length;
      if (to === from) continue;
      let begin = 0;
      for (let k = 0; k < ends.length; k++) {
        if (begin < to && ends[k]! > from) inside[start + k] = 1;
        begin = ends[k]!;
      }
    }
  }
  return inside;
}

/**
 * The temperature each response token of `ids` was sampled at under `sampling`: the opening's
 * where the turn's text before the token asked for it (the sampler's rule, beginsContent), else
 * logProbTemperature's; 1 outside responses. What the trainer divides each token's logits by.
 */
export function samplingTemperatures(ids: Int32Array, mask: Uint8Array, pieceOf: (id: number) => string, sampling: SamplingParams): Float32Array {
  const outside = logProbTemperature(sampling);
  const opening = sampling.doSample ? sampling.opening : undefined;
  const out = new Float32Array(ids.length).fill(1);
  let text = '';
  for (let t = 0; t < ids.length; t++) {
    if (!mask[t]) {
      text = '';
      continue;
    }
    out[t] = opening && beginsContent(text, opening) ? opening.temperature : outside;
    text += pieceOf(ids[t]!);
  }
  return out;
}

/** Zeroes, in place, the advantages of each row's think tokens (thinkTokenMask's rows); returns how many. */
export function dropThinkCredit(advantages: readonly Float32Array[], thinkMasks: readonly Uint8Array[]): number {
  let dropped = 0;
  thinkMasks.forEach((inside, i) => {
    const row = advantages[i]!;
    inside.forEach((flag, t) => {
      if (!flag) return;
      row[t] = 0;
      dropped++;
    });
  });
  return dropped;
}
