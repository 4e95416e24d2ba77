/**
 * Kuhn Poker for two seats, as TextArena's KuhnPoker-v0 plays it (game.ts names the source and the
 * one rule where its code and its prompt part). Seat P0 is TextArena's Player 0 and P1 its Player 1,
 * who acts first in round 1; the first to act alternates each round. A move is an action in
 * brackets, `[check]`, `[bet]`, `[call]` or `[fold]`, read as TextArena reads it (texts.ts).
 *
 * Each seat sees only its own card until a showdown shows both. An observation is what TextArena
 * tells that player since it last moved (the deal, the other's moves, how a hand ended), then the
 * actions open to it; at a player's second decision of a hand its card is said again, so a prompt
 * that shows only the latest observation still has it. The other's reply text is never shown,
 * only the action read from it, so a reply that reasons about its card does not give it away.
 *
 * Rewards: 0 on every move until the game ends, then each seat's chips won or lost over the game
 * (zero-sum); the seat with more chips wins, as TextArena decides the game. A bad answer (no
 * action, or one not open now) costs a retry while TextArena's error allowance lasts (1 in a row);
 * the next one forfeits the game (TextArena: the game lost). Only the seat that answered badly
 * pays: a retry changes no reward, and a forfeit costs the forfeiter its stake in the hand, as a
 * fold would, and at least 1 chip over the game, so that it ends behind; the other seat gains what
 * it pays (zero-sum) and never loses a chip for it. A forfeit is never worth more than a fold:
 * were it free, a seat holding a beaten card facing a bet would do better to answer nonsense twice.
 *
 * Opponents: random (a random open action) and nash (an equilibrium strategy, nash.ts, drawn by
 * the env's seeded stream). No solution hook: a mixed strategy is not a move. The warm start's
 * notes (stateNotes) read out the card of the seat to act.
 */
import {
  defineSeatedEnv,
  type OpponentHooks,
  type RenderMode,
  Rng,
  type SeatedEnv,
  type SeatedResetResult,
  type SeatedStepResult,
  type SeatOutcome,
  type WarmStartHooks,
  z,
} from 'agentic';
import { act, DEALS, firstToAct, type Hand, handResult, isHandOver, legalActions, newHand, pot, seatToAct, stake } from './game';
import { MAX_ALPHA, nashAction } from './nash';
import {
  availableActions,
  cardNotes,
  closedActionReason,
  forfeitMessage,
  gameEndMessage,
  handEndMessage,
  moveMessage,
  parseAction,
  compactInstruction,
  roundOpening,
  seatInstruction,
  UNREADABLE_REASON,
} from './texts';
import { invalidMoveMessage, RETRY_NOTE } from '../_textarena/two_player';

/** The seats by TextArena player id. */
export const SEAT_NAMES = ['P0', 'P1'] as const;

const Config = z.strictObject({
  rounds: z
    .int()
    .min(1)
    .default(1)
    .describe(
      "Hands in a game (TextArena's max_rounds: its class defaults to 1, the registered KuhnPoker-v0 plays 3). With 1, a game's reward is one hand's chips, earned by that hand's moves alone.",
    ),
  nash_alpha: z
    .number()
    .min(0)
    .max(MAX_ALPHA)
    .default(MAX_ALPHA)
    .describe(
      "The nash opponent's alpha when it acts first: it bets a J with this probability, a K with 3 alpha, and calls with a Q with alpha + 1/3. Every alpha in [0, 1/3] is an equilibrium; 1/3 bets most often, so a learner meets a bet most often and pays most for answering it wrongly.",
    ),
  error_allowance: z
    .int()
    .min(0)
    .default(1)
    .describe("Bad answers a seat may give in a row and retry (TextArena's error_allowance); the next one forfeits the game."),
  prompt_style: z
    .enum(['textarena', 'compact'])
    .default('textarena')
    .describe(
      "textarena: TextArena's own texts (its rules as the instruction, then what happened since the seat last acted; about 390 tokens a turn with the built-in tokenizer). compact: the same game in few words for small policies: 'One-card poker, three cards. You are P1.' and each decision as 'Moves: P1 [check], P0 [bet]. Open: [call] [fold]. Card K': the hand's moves and the seat's card, all it may know (about 60 tokens a turn).",
    ),
});
type KuhnPokerConfig = z.output<typeof Config>;

/** A finished or running hand as anyone watching sees it: the pot, the moves, and the cards only once it is over. */
function handLine(round: number, hand: Hand, showCards: boolean): string {
  const moves = hand.history.map((action, at) => `${SEAT_NAMES[(hand.first + at) % 2]} [${action}]`).join(', ');
  const cards = showCards ? `${SEAT_NAMES[0]} ${hand.cards[0]}, ${SEAT_NAMES[1]} ${hand.cards[1]}` : 'cards hidden';
  return `Round ${round}: pot ${pot(hand)}; ${moves || 'no moves yet'}; ${cards}`;
}

function outcomeOf(chips: number): SeatOutcome {
  return chips > 0 ? 'win' : chips < 0 ? 'loss' : 'draw';
}

class KuhnPoker implements SeatedEnv, OpponentHooks, WarmStartHooks {
  private deals = Rng.fromSeed(0, 'kuhn_poker', 'deal');
  private randomMoves = Rng.fromSeed(0, 'kuhn_poker', 'random-move');
  private nashDraws = Rng.fromSeed(0, 'kuhn_poker', 'nash');
  /** 1-based. */
  private round = 1;
  private hand: Hand = newHand(DEALS[0]!, firstToAct(1));
  /** The hands played out, for render. */
  private played: Hand[] = [];
  /** Each seat's chips won (+) or lost (-) so far. */
  private chips = [0, 0];
  /** Bad answers in a row of the seat to act. */
  private errors = 0;
  private forfeitedBy: number | null = null;
  /** What each seat has been told and not yet shown: the start of its next observation. */
  private unread: string[][] = [[], []];

  constructor(private readonly config: KuhnPokerConfig) {}

  reset(seed: number): SeatedResetResult {
    this.deals = Rng.fromSeed(seed, 'kuhn_poker', 'deal');
    this.randomMoves = Rng.fromSeed(seed, 'kuhn_poker', 'random-move');
    this.nashDraws = Rng.fromSeed(seed, 'kuhn_poker', 'nash');
    this.round = 1;
    this.played = [];
    this.chips = [0, 0];
    this.errors = 0;
    this.forfeitedBy = null;
    this.unread = [[], []];
    this.deal();
    const instructions = SEAT_NAMES.map((_, seat) =>
      this.config.prompt_style === 'compact' ? compactInstruction(seat, this.config.rounds) : seatInstruction(seat, this.config.rounds),
    );
    const seat = seatToAct(this.hand);
    return { observation: this.view(seat), info: { instruction: instructions[seat]! }, seat, instructions };
  }

  /** A new hand of this round, each seat told its own card. */
  private deal(): void {
    this.hand = newHand(this.deals.choice(DEALS), firstToAct(this.round));
    this.hand.cards.forEach((card, seat) => this.unread[seat]!.push(roundOpening(this.round, this.config.rounds, card)));
  }

  /**
   * The observation of `seat`, which is to act: what it has not seen yet, and the actions open to
   * it; compact: its card, the hand's moves and the open actions (and the round and the chips in a
   * game of several hands).
   */
  private view(seat: number): string {
    if (this.config.prompt_style === 'compact') {
      this.unread[seat]!.splice(0);
      const moves = this.hand.history.map((action, at) => `${SEAT_NAMES[(this.hand.first + at) % 2]} [${action}]`).join(', ') || 'none';
      const round = this.config.rounds > 1 ? `Round ${this.round} of ${this.config.rounds}, chips ${this.chips[seat]} to ${this.chips[1 - seat]}. ` : '';
      const open = legalActions(this.hand.history)
        .map((action) => `[${action}]`)
        .join(' ');
      return `${round}Moves: ${moves}. Open: ${open}. Card ${this.hand.cards[seat]}`;
    }
    const lines = this.unread[seat]!.splice(0);
    const card = this.hand.cards[seat]!;
    if (!lines.includes(roundOpening(this.round, this.config.rounds, card))) lines.push(`Your card is: '${card}'`);
    lines.push(availableActions(legalActions(this.hand.history)));
    return lines.join('\n');
  }

  step(response: string): SeatedStepResult {
    const mover = seatToAct(this.hand);
    const open = legalActions(this.hand.history);
    const action = parseAction(response);
    if (action === null) return this.badAnswer(mover, UNREADABLE_REASON);
    if (!open.includes(action)) return this.badAnswer(mover, closedActionReason(open));
    this.errors = 0;
    this.hand = act(this.hand, action);
    const moved = moveMessage(mover, action);
    const info = { metrics: { action_is_valid: true }, action: `[${action}]`, actionDesc: moved };
    this.tellBoth(moved);
    if (isHandOver(this.hand.history)) {
      this.played.push(this.hand);
      handResult(this.hand).forEach((won, seat) => {
        this.chips[seat]! += won;
      });
      this.tellBoth(handEndMessage(this.hand, this.chips));
      if (this.round === this.config.rounds) return this.ended(mover, gameEndMessage(this.chips, this.config.rounds), info);
      this.round += 1;
      this.deal();
    }
    const next = seatToAct(this.hand);
    return { observation: this.view(next), reward: 0, terminated: false, truncated: false, info, seat: next, rewards: [0, 0] };
  }

  private tellBoth(message: string): void {
    for (const messages of this.unread) messages.push(message);
  }

  /** A bad answer: a retry while the allowance lasts (the same seat acts again), else the game forfeited. */
  private badAnswer(mover: number, reason: string): SeatedStepResult {
    const info = { metrics: { action_is_valid: false }, action: null, actionDesc: `an invalid move: ${reason}` };
    this.errors += 1;
    if (this.errors > this.config.error_allowance) {
      // the forfeiter loses its stake in the hand, as a fold would, and ends at least 1 chip down
      const result = Math.min(this.chips[mover]! - stake(this.hand, mover), -1);
      this.chips = mover === 0 ? [result, -result] : [-result, result];
      this.forfeitedBy = mover;
      return this.ended(mover, `${invalidMoveMessage(mover, reason)}\n${forfeitMessage(mover, this.chips)}`, info);
    }
    this.unread[mover]!.push(`${invalidMoveMessage(mover, reason)} ${RETRY_NOTE}`);
    const retry = this.config.prompt_style === 'compact' ? `Invalid: ${reason}\n` : '';
    return { observation: `${retry}${this.view(mover)}`, reward: 0, terminated: false, truncated: false, info, seat: mover, rewards: [0, 0] };
  }

  /** The step of seat `mover` that ends the game: every seat gets its chips, and more chips wins. */
  private ended(mover: number, verdict: string, info: SeatedStepResult['info']): SeatedStepResult {
    const rewards = [...this.chips];
    return {
      observation: [...this.unread[mover]!.splice(0), verdict].join('\n'),
      reward: rewards[mover]!,
      terminated: true,
      truncated: false,
      info,
      seat: mover,
      rewards,
      outcome: rewards.map(outcomeOf),
    };
  }

  /** 'text': every hand so far (both cards once it is over) and the chips; no picture. */
  render(mode: RenderMode): string | null {
    if (mode === 'rgb') return null;
    const lines = this.played.map((hand, at) => {
      const [won0, won1] = handResult(hand);
      return `${handLine(at + 1, hand, true)}; ${SEAT_NAMES[0]} ${won0}, ${SEAT_NAMES[1]} ${won1}`;
    });
    if (this.forfeitedBy !== null) lines.push(`${handLine(this.round, this.hand, true)}; ${SEAT_NAMES[this.forfeitedBy]} forfeits the game`);
    else if (!isHandOver(this.hand.history)) lines.push(`${handLine(this.round, this.hand, false)}; ${SEAT_NAMES[seatToAct(this.hand)]} to act`);
    lines.push(`Chips: ${SEAT_NAMES[0]} ${this.chips[0]}, ${SEAT_NAMES[1]} ${this.chips[1]}`);
    return lines.join('\n');
  }

  close(): void {}

  /** A random open action for the seat to act. */
  sampleRandomAction(): string {
    return `[${this.randomMoves.choice(legalActions(this.hand.history))}]`;
  }

  /** The card of the seat to act, read out for the warm start's notes (texts.ts). */
  stateNotes(): string {
    return cardNotes(this.hand.cards[seatToAct(this.hand)]!);
  }

  /** Opponent `name`: 'nash' plays the equilibrium strategy, its mixing drawn from the env's seeded stream. */
  opponentAction(name: string): string {
    if (name !== 'nash') throw new Error(`kuhn_poker has no opponent '${name}' (random, nash)`);
    const card = this.hand.cards[seatToAct(this.hand)]!;
    return `[${nashAction(card, this.hand.history, this.config.nash_alpha, this.nashDraws.float())}]`;
  }
}

export default defineSeatedEnv({
  name: 'kuhn_poker',
  description:
    "Kuhn Poker for two seats (TextArena's KuhnPoker-v0): J < Q < K, ante 1, one card each; P1 acts first in round 1; a move is [check], [bet], [call] or [fold].",
  config: Config,
  seats: { names: [...SEAT_NAMES], zeroSum: true, opponents: ['nash'] },
  env: KuhnPoker,
});
