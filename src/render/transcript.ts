/**
 * An episode as plain text, for every env (pictures or not): the instruction, then each turn's
 * observation, the policy's response exactly as the env received it, the parsed action and the
 * reward; then the final observation, the score and why the episode ended.
 */
import type { Replay, ReplayedTurn } from './replay';

export interface TranscriptHeader {
  tag: string;
  seed: number;
  /** e.g. "episode 3 of 8". */
  position: string;
  /** The render's sentence on where the episodes came from. */
  source: string;
}

function actionLine(turn: ReplayedTurn): string {
  if (typeof turn.action === 'string') return turn.metrics.action_is_valid === false ? `${turn.action} (not a valid action)` : turn.action;
  if (turn.action === null) return 'none (no valid action in the response)';
  return turn.metrics.action_is_valid === false ? 'none (not a valid action)' : '(the env does not say)';
}

/** The response as the env received it; one that is only whitespace is shown escaped, or it would look missing. */
function responseShown(text: string): string {
  return text.trim() === '' ? `(only whitespace: ${JSON.stringify(text)})` : text;
}

const number = (value: number) => String(+value.toFixed(6));

export function transcriptText(header: TranscriptHeader, replay: Replay): string {
  const score = replay.turns.reduce((sum, t) => sum + t.reward, 0);
  const parts = [
    `${header.tag}, seed ${header.seed} (${header.position})`,
    `source: ${header.source}`,
    `${replay.turns.length} turn${replay.turns.length === 1 ? '' : 's'}, score ${number(score)}, ended: ${replay.endReason}${replay.failure ? ` (${replay.failure})` : ''}`,
    '',
    '=== instruction',
    replay.instruction,
  ];
  replay.turns.forEach((turn, i) => {
    parts.push(
      '',
      `=== turn ${i + 1}`,
      '--- observation',
      turn.observation,
      '--- response',
      responseShown(turn.responseText),
      '---',
      `action: ${actionLine(turn)}`,
      `reward: ${number(turn.reward)}`,
    );
  });
  parts.push('', '=== end', '--- final observation', replay.finalObservation, '---', `score: ${number(score)}`, `ended: ${replay.endReason}`, '');
  return parts.join('\n');
}
