/**
 * The words around an environment's observations: the system prompt and the user message of each
 * turn, per env manager kind. A template is text with `{name}` placeholders (Python's
 * str.format spelling, as ROLL's configs write them; `{{` and `}}` are literal braces).
 * custom_envs.<tag>.agent_system_template / agent_template replace the defaults.
 */
import type { EnvManagerKind } from './schema';

export const DEFAULT_SYSTEM_TEMPLATE = 'You are an agent playing a game. Each turn, choose one action that gets you closer to the highest reward.';

/** The user message of every turn of a trajectory-wise episode; the first turn has the instruction above it. */
export const DEFAULT_TRAJ_TEMPLATE = `Turn {turn_idx}. Observation:
{observation}
You have {actions_left} actions left. Reply in at most {max_response_length} tokens.`;

/** The whole user message of a step-wise turn: the task, recent steps, and the current state. */
export const DEFAULT_STEP_TEMPLATE = `{env_instruction}

You have taken {step_count} steps so far. The last {history_length}, oldest first:
{history}

Step {current_step}. Observation:
{current_observation}
You have {actions_left} actions left. Reply in at most {max_response_length} tokens.`;

/** The user message of a step_concat turn (ROLL's StepConcatEnvManager): the earlier observations, then the current one and its suffix. */
export const DEFAULT_STEP_CONCAT_TEMPLATE = `{history}
{current_observation}`;

export const TEMPLATE_FIELDS: Record<EnvManagerKind, readonly string[]> = {
  traj: ['turn_idx', 'observation', 'actions_left', 'max_response_length', 'suffix', 'last_action_desc'],
  step: [
    'env_instruction',
    'step_count',
    'history_length',
    'history',
    'current_step',
    'current_observation',
    'actions_left',
    'max_response_length',
    'suffix',
    'last_action_desc',
  ],
  // ROLL's StepConcatEnvManager fills these two only (the suffix is part of current_observation)
  step_concat: ['history', 'current_observation'],
};

export function defaultTemplate(kind: EnvManagerKind): string {
  return kind === 'traj' ? DEFAULT_TRAJ_TEMPLATE : kind === 'step' ? DEFAULT_STEP_TEMPLATE : DEFAULT_STEP_CONCAT_TEMPLATE;
}

type Piece = { text: string } | { field: string };

/** Splits a template into text and fields; throws an Error (one line) on a malformed one. */
function parse(template: string): Piece[] {
  const pieces: Piece[] = [];
  let text = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if ((c === '{' || c === '}') && template[i + 1] === c) {
      text += c;
      i += 1;
    } else if (c === '{') {
      const end = template.indexOf('}', i);
      if (end < 0) throw new Error(`a '{' at character ${i} is never closed (write {{ for a literal brace)`);
      const field = template.slice(i + 1, end).trim();
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field))
        throw new Error(`'{${template.slice(i + 1, end)}}' is not a placeholder name (write {{ for a literal brace)`);
      if (text) pieces.push({ text });
      text = '';
      pieces.push({ field });
      i = end;
    } else if (c === '}') {
      throw new Error(`a lone '}' at character ${i} (write }} for a literal brace)`);
    } else {
      text += c;
    }
  }
  if (text) pieces.push({ text });
  return pieces;
}

/** The first problem of a template for a manager kind, or null. */
export function templateProblem(template: string, kind: EnvManagerKind): string | null {
  let pieces: Piece[];
  try {
    pieces = parse(template);
  } catch (error) {
    return (error as Error).message;
  }
  const known = TEMPLATE_FIELDS[kind];
  for (const piece of pieces) {
    if ('field' in piece && !known.includes(piece.field)) {
      return `unknown placeholder {${piece.field}} for env_manager_cls ${kind} (known: ${known.map((f) => `{${f}}`).join(' ')})`;
    }
  }
  return null;
}

/** Fills a template that templateProblem accepted. */
export function fillTemplate(template: string, values: Readonly<Record<string, string | number>>): string {
  return parse(template)
    .map((piece) => ('text' in piece ? piece.text : String(values[piece.field] ?? '')))
    .join('');
}
