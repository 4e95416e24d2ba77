/**
 * A session's recorded calls as turns of training rows. When a call's prompt extends the previous
 * call's prompt and reply token for token (the agent sent the conversation back as it was, and
 * the template rendered the earlier turns as they were sampled), the call is the next turn of the
 * same row: its new ids are the prompt part, its reply the sampled part, exactly as an env
 * episode's turns are. When it does not (the agent rewrote its history, or the template renders
 * an earlier turn differently, e.g. dropping `<think>`), the row ends there and the call starts a
 * new one: the session is split, and the split is counted (gateway/prefix_mismatch).
 */

/** One model call of a session, as the gateway recorded it. */
export interface RecordedCall {
  promptIds: readonly number[];
  responseIds: readonly number[];
  /** The sampling log-prob of each response id. */
  logProbs: readonly number[];
  /** The reply went back as server-sent events (the request asked for `stream: true`). */
  streamed: boolean;
}

export interface SessionTurn {
  /** The row so far continues with these ids (the whole prompt when the turn opens a row). */
  promptIds: number[];
  responseIds: number[];
  logProbs: number[];
  /** The turn starts a new row: its prompt did not extend what came before. */
  opensRow: boolean;
}

function extendsContext(prompt: readonly number[], context: readonly number[]): boolean {
  if (prompt.length < context.length) return false;
  for (let i = 0; i < context.length; i++) if (prompt[i] !== context[i]) return false;
  return true;
}

/** Whether a prompt continues the session: it extends the last call's prompt and reply (any prompt opens an empty session). */
export function continuesSession(prompt: readonly number[], calls: readonly RecordedCall[]): boolean {
  const last = calls.at(-1);
  return !last || extendsContext(prompt, [...last.promptIds, ...last.responseIds]);
}

/** The turns of a session's calls, in order, and how many times the session was split. */
export function sessionTurns(calls: readonly RecordedCall[]): { turns: SessionTurn[]; mismatches: number } {
  const turns: SessionTurn[] = [];
  let context: number[] = [];
  let mismatches = 0;
  for (const [i, call] of calls.entries()) {
    const continues = i > 0 && extendsContext(call.promptIds, context);
    if (i > 0 && !continues) mismatches++;
    turns.push({
      promptIds: continues ? call.promptIds.slice(context.length) : [...call.promptIds],
      responseIds: [...call.responseIds],
      logProbs: [...call.logProbs],
      opensRow: !continues,
    });
    context = [...call.promptIds, ...call.responseIds];
  }
  return { turns, mismatches };
}
