/**
 * An episode as markdown, for TensorBoard's text tab: a header line, the instruction, then each
 * turn's observation, response, parsed action and reward, and the state it ended in. Env and
 * policy text goes into code fences, so grids keep their shape and nothing in them is read as
 * markdown.
 */
import type { Episode } from '../rollout/types';

/** A fence longer than any run of backticks inside, so the text cannot close it early. */
function fenced(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}\n${text}\n${fence}`;
}

const number = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3));

function actionText(action: string | null | undefined): string {
  if (action === undefined) return '';
  if (action === null) return ' · no valid action';
  return ` · action \`${action.replace(/`/g, "'")}\``;
}

export function episodeMarkdown(episode: Episode): string {
  const parts = [
    `**${episode.tag}** · seed ${episode.seed} · score ${number(episode.score)} · ${episode.turns.length} turn${episode.turns.length === 1 ? '' : 's'} · ended: ${episode.endReason}`,
  ];
  if (episode.failure) parts.push(`**Failure:** ${episode.failure}`);
  parts.push('**Instruction**', fenced(episode.instruction));
  episode.turns.forEach((turn, i) => {
    parts.push(`**Turn ${i + 1}**${actionText(turn.action)} · reward ${number(turn.reward)}`);
    parts.push('Observation', fenced(turn.observation), 'Response', fenced(turn.responseText));
    if (turn.actionDesc) parts.push(`_${turn.actionDesc.replace(/[_*`]/g, ' ')}_`);
  });
  parts.push('**Final observation**', fenced(episode.finalObservation));
  return parts.join('\n\n');
}
