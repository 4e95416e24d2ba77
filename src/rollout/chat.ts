/**
 * Token ids of a multi-turn chat, built turn by turn so that what the policy generated stays in
 * the context exactly as sampled: there is no decode and re-encode of earlier turns (which can
 * tokenize differently and make the trainer score tokens the sampler never produced).
 *
 * Turn 1 is the chat template applied to [system, user] with the generation prompt. A later turn
 * appends only new tokens: whatever the template puts after an assistant message that the policy
 * did not sample itself (for ChatML, `<|im_end|>` unless the response stopped on it, then the
 * newline), followed by the new user message and the generation prompt. The new message is
 * rendered behind an empty mock system message whose text is then cut off, so templates that
 * add a default system prompt to a conversation without one (Qwen2.5's) do not add it again.
 *
 * With function calling (an env that gives `tools`, sdk/function_calls.ts), the first turn hands
 * the tools to the template, which lists them in the system message, and tool results come back
 * as tool messages: the very ids the gateway builds from an outside agent's messages.
 */
import { AgenticError } from '../errors';
import type { Tokenizer } from '../model/tokenizer';
import type { TemplateMessage } from '../model/chat_template';

type ChatMessage = TemplateMessage & { role: 'system' | 'user' | 'assistant' | 'tool' };

/** What the next turn says: a user message, or the results of the tools the last reply called. */
export type NextMessage = { role: 'user'; content: string } | { role: 'tool'; results: readonly string[] };

const MARKER = '\u2063agentic-response\u2063';

export class ChatFormat {
  /** Tokens that end a response: the template's end-of-turn token and the tokenizer's eos. */
  readonly stopTokenIds: number[];
  /** Template text after an assistant message, as ids (`<|im_end|>\n` for ChatML). */
  private readonly closeIds: number[];
  private readonly mockSystem: string;

  constructor(readonly tokenizer: Tokenizer) {
    const mock: ChatMessage = { role: 'system', content: '' };
    this.mockSystem = this.render([mock], false);
    const withReply = this.render([mock, { role: 'user', content: 'x' }, { role: 'assistant', content: MARKER }], false);
    const at = withReply.lastIndexOf(MARKER);
    if (at < 0) throw new AgenticError(`${tokenizer.source}: the chat template drops assistant messages; agentic needs it to render them`);
    this.closeIds = this.encode(withReply.slice(at + MARKER.length));
    const stops = [tokenizer.imEndId, tokenizer.eosTokenId, this.closeIds[0]].filter(
      (id): id is number => id !== null && id !== undefined && tokenizer.specialTokenIds.has(id),
    );
    this.stopTokenIds = [...new Set(stops)];
    if (this.stopTokenIds.length === 0)
      throw new AgenticError(`${tokenizer.source}: no end-of-turn token (no <|im_end|> or eos), so responses could never stop`);
  }

  /** The first turn: system prompt and user message (and the tools, if any), ready for the assistant's reply. */
  firstTurn(system: string, user: string, tools?: readonly unknown[]): number[] {
    return this.encode(
      this.render(
        [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        true,
        tools,
      ),
    );
  }

  /**
   * The ids that follow `response` (the previous turn's ids as sampled) to ask the next question:
   * the end of the assistant message the policy did not generate, then the new user message.
   */
  nextTurn(response: readonly number[], next: string | NextMessage): number[] {
    const stoppedOnClose = response.length > 0 && response[response.length - 1] === this.closeIds[0];
    const close = stoppedOnClose ? this.closeIds.slice(1) : this.closeIds;
    const message: NextMessage = typeof next === 'string' ? { role: 'user', content: next } : next;
    const messages: ChatMessage[] =
      message.role === 'user' ? [{ role: 'user', content: message.content }] : message.results.map((content) => ({ role: 'tool', content }));
    const rendered = this.render([{ role: 'system', content: '' }, ...messages], true);
    if (!rendered.startsWith(this.mockSystem)) {
      throw new AgenticError(
        `${this.tokenizer.source}: the chat template renders a system message differently alone and in a conversation; agentic cannot append turns to it`,
      );
    }
    return [...close, ...this.encode(rendered.slice(this.mockSystem.length))];
  }

  /** The response as text for the environment (special tokens left out). */
  responseText(response: readonly number[]): string {
    return this.tokenizer.decode(response, { skipSpecialTokens: true });
  }

  /**
   * What one token adds to responseText, memoised: '' for a special token. Read token by token,
   * a response gives the text the sampler saw (where generating_args.answer_temperature applies).
   */
  readonly responsePiece = (id: number): string => {
    let piece = this.pieces.get(id);
    if (piece === undefined) this.pieces.set(id, (piece = this.tokenizer.decode([id], { skipSpecialTokens: true })));
    return piece;
  };
  private readonly pieces = new Map<number, string>();

  private render(messages: readonly ChatMessage[], generationPrompt: boolean, tools?: readonly unknown[]): string {
    return this.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: generationPrompt, ...(tools && tools.length > 0 ? { tools } : {}) });
  }

  private encode(text: string): number[] {
    return this.tokenizer.encode(text, { addSpecialTokens: false });
  }
}
