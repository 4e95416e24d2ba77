/**
 * Simple Negotiation for two seats, as TextArena's SimpleNegotiation-v0 plays it (game.ts names the
 * source). Seat P0 is TextArena's Player 0 and moves first; the seats alternate for `max_turns`
 * turns in all (10). Each holds goods of five resources and values them privately (the seed draws
 * both). On its turn a seat may accept or deny the offer the other made on the turn before, and
 * make an offer of its own, `[Offer: 3 Sheep -> 1 Ore]` (it gives -> it gets), which the other
 * answers on its next turn: `[Accept]` trades, anything else denies it and the offer lapses.
 * When the turns run out, the seat whose inventory value (by its own values) gained more wins (+1,
 * the other -1); equal gains draw (0 each). Nothing is paid before the end: zero-sum, no format
 * penalty (TextArena gives none).
 *
 * Where TextArena's code and the plain reading of its rules part, the plain reading is played (each
 * is in docs/multi_agent.md): a pending offer lapses once the other has answered it (TextArena's
 * stays on the table, where its own proposer could later accept it); the game ends after
 * `max_turns` turns, as its prompt says (its code lets one more move in); a reply that uses none of
 * the tokens is a bad move (TextArena takes talk alone as a turn without an offer, which '[Deny]'
 * says here); a bad move changes nothing (TextArena may apply an accepted trade and then refuse the
 * turn's offer). The first bad move of a turn costs a retry, as TextArena's error allowance of 1
 * does; a second in a row loses the game. What a seat writes besides its tokens is never shown to
 * the other, as SimpleNegotiation-v0's observation wrapper shows only the game's messages.
 *
 * Opponents: random (a random valid move) and greedy (greedy.ts: accepts what raises its own value,
 * else offers a trade that does; not optimal). No solution hook: no known player is best.
 */
import {
  defineSeatedEnv,
  type OpponentHooks,
  type RenderMode,
  type RgbFrame,
  Rng,
  type SeatedEnv,
  type SeatedResetResult,
  type SeatedStepResult,
  z,
} from 'agentic';
import { errorAllowance, gameResult, invalidMoveMessage, RETRY_NOTE } from '../_textarena/two_player';
import { afterTrade, type Deal, dealFrom, holds, type Inventory, inventoryValue, type Offer, offerText, RESOURCES } from './game';
import { greedyAccepts, greedyOffers } from './greedy';
import { negotiationPicture, negotiationText } from './render';
import {
  acceptedMessage,
  compactInstruction,
  compactView,
  gainsMessage,
  gameEndMessage,
  inventoryLines,
  noOfferMessage,
  offerMessage,
  REASONS,
  type Reply,
  readReply,
  rejectedMessage,
  seatInstruction,
} from './texts';

/** The seats by TextArena player id. */
export const SEAT_NAMES = ['P0', 'P1'] as const;

/** The most units of one resource the random player gives or asks in one offer. */
const MOST_RANDOM_UNITS = 5;

const Config = z.strictObject({
  max_turns: z
    .int()
    .min(2)
    .default(10)
    .describe(
      "Turns in a game, both seats' together (TextArena's max_turns: SimpleNegotiation-v0 plays 10, -short 6, -long 30); at least 2, so both seats move.",
    ),
  error_allowance: errorAllowance(),
  prompt_style: z
    .enum(['textarena', 'compact'])
    .default('textarena')
    .describe(
      "textarena: TextArena's own texts (its instruction with the seat's goods and values, then the game's messages since the seat last moved, its goods now and the turn; about 720 tokens a turn with the built-in tokenizer, which knows few of its words: the instruction alone is 463). compact: the same game in few words for small policies: 'You are P0; 10 turns. Goods are count@your price; ...' and each turn as 'Turn 3/10. Wheat 12@5 Wood 7@10 ..., gain +4. P1 offers 2 Wheat for 1 Ore. Open: [Accept] [Deny] [Offer: ...]': the seat's goods at its values, its gain, the offer it may answer and its moves (about 155 tokens a turn, the instruction 68 of them).",
    ),
});
type SimpleNegotiationConfig = z.output<typeof Config>;

/** An offer of `seat` drawn at random: up to 5 units of one resource it holds for up to 5 of another; null when it holds nothing. */
function randomOffer(rng: Rng, seat: number, inventory: Inventory): Offer | null {
  const held = RESOURCES.filter((resource) => inventory[resource] > 0);
  if (held.length === 0) return null;
  const given = rng.choice(held);
  const give = rng.intBetween(1, Math.min(inventory[given], MOST_RANDOM_UNITS));
  const asked = rng.choice(RESOURCES.filter((resource) => resource !== given));
  return { from: seat, give: { [given]: give }, get: { [asked]: rng.intBetween(1, MOST_RANDOM_UNITS) } };
}

class SimpleNegotiation implements SeatedEnv, OpponentHooks {
  private deal: Deal = dealFrom(Rng.fromSeed(0, 'simple_negotiation', 'deal'));
  /** Each seat's goods now. */
  private resources: [Inventory, Inventory] = [...this.deal.resources];
  /** The turns played (a bad move is not one); the seat to move is the turn's parity. */
  private turn = 0;
  /** The offer the seat to move may answer: made on the turn before, it lapses on this one. */
  private offer: Offer | null = null;
  /** Bad moves in a row of the seat to move. */
  private errors = 0;
  /** How the game ended, for render; null while it runs. */
  private ending: string | null = null;
  /** What each seat has been told and not yet shown: the start of its next observation. */
  private unread: string[][] = [[], []];
  private randomMoves = Rng.fromSeed(0, 'simple_negotiation', 'random-move');
  private greedyDraws = Rng.fromSeed(0, 'simple_negotiation', 'greedy');

  constructor(private readonly config: SimpleNegotiationConfig) {}

  reset(seed: number): SeatedResetResult {
    this.deal = dealFrom(Rng.fromSeed(seed, 'simple_negotiation', 'deal'));
    this.resources = [...this.deal.resources];
    this.turn = 0;
    this.offer = null;
    this.errors = 0;
    this.ending = null;
    this.unread = [[], []];
    this.randomMoves = Rng.fromSeed(seed, 'simple_negotiation', 'random-move');
    this.greedyDraws = Rng.fromSeed(seed, 'simple_negotiation', 'greedy');
    const { max_turns: turns, prompt_style: style } = this.config;
    const instructions = SEAT_NAMES.map((_, seat) =>
      style === 'compact' ? compactInstruction(seat, turns) : seatInstruction(seat, this.deal.resources[seat]!, this.deal.values[seat]!, turns),
    );
    return { observation: this.view(0), info: { instruction: instructions[0]! }, seat: 0, instructions };
  }

  private get seatToMove(): number {
    return this.turn % 2;
  }

  /** Each seat's inventory value now less its value at the deal, by its own values. */
  private gains(): number[] {
    return this.resources.map((resources, seat) => {
      const values = this.deal.values[seat]!;
      return inventoryValue(resources, values) - inventoryValue(this.deal.resources[seat]!, values);
    });
  }

  /**
   * The observation of `seat`, which is to move: the game's messages it has not seen, the offer it
   * may answer (again, after a retry), its goods now and the turn; compact: the turn, its goods at
   * its values, its gain, the offer and the open moves.
   */
  private view(seat: number): string {
    const lines = this.unread[seat]!.splice(0);
    const turn = this.turn + 1;
    const { max_turns: turns, prompt_style: style } = this.config;
    if (style === 'compact') return compactView(turn, turns, this.resources[seat]!, this.deal.values[seat]!, this.gains()[seat]!, this.offer);
    if (this.offer && !lines.includes(offerMessage(this.offer))) lines.push(offerMessage(this.offer));
    lines.push(inventoryLines(this.resources[seat]!, this.deal.values[seat]!), `Turn ${turn} of ${turns}.`);
    return lines.join('\n');
  }

  /** Why `reply` is not a move of seat `mover` now (TextArena's reasons, checked against its goods after a trade it accepts), or null. */
  private problemWith(mover: number, reply: Reply): string | null {
    if (!reply.accept && !reply.deny && reply.offer === null) return REASONS.noAction(mover);
    let goods = this.resources[mover]!;
    if (this.offer && reply.accept) {
      if (!holds(goods, this.offer.get)) return REASONS.acceptBeyondMeans();
      goods = afterTrade(this.resources, this.offer)[mover]!;
    }
    if (reply.offer === 'malformed') return REASONS.malformedOffer(mover);
    if (reply.offer && !holds(goods, reply.offer.give)) return REASONS.offerBeyondMeans(mover);
    return null;
  }

  step(response: string): SeatedStepResult {
    const mover = this.seatToMove;
    const reply = readReply(response);
    const problem = this.problemWith(mover, reply);
    if (problem) return this.badMove(mover, problem);
    this.errors = 0;
    const answered = this.offer;
    const told: string[] = [];
    if (answered && reply.accept) {
      this.resources = afterTrade(this.resources, answered);
      told.push(acceptedMessage(answered));
    } else if (answered) told.push(rejectedMessage(mover));
    // problemWith has refused a malformed offer: what is left is an offer or none
    const made = reply.offer === 'malformed' ? null : reply.offer;
    this.offer = made && { from: mover, ...made };
    told.push(this.offer ? offerMessage(this.offer) : noOfferMessage(mover));
    for (const messages of this.unread) messages.push(...told);
    this.turn += 1;
    const moves = [...(answered ? [reply.accept ? '[Accept]' : '[Deny]'] : []), ...(this.offer ? [offerText(this.offer)] : [])];
    // a turn that neither answers an offer nor makes one is a pass, which '[Deny]' alone writes
    const info = { metrics: { action_is_valid: true }, action: moves.join(' ') || '[Deny]', actionDesc: told.join(' ') };
    if (this.turn === this.config.max_turns) {
      const gains = this.gains();
      const winner = gains[0] === gains[1] ? null : gains[0]! > gains[1]! ? 0 : 1;
      const ending = winner === null ? 'Game over: a draw' : `Game over: ${SEAT_NAMES[winner]} wins`;
      return this.ended(mover, winner, `${gameEndMessage(gains)} ${gainsMessage(gains)}`, ending, info);
    }
    const next = this.seatToMove;
    return { observation: this.view(next), reward: 0, terminated: false, truncated: false, info, seat: next, rewards: [0, 0] };
  }

  /** A bad move: a retry while the allowance lasts (the same seat moves again, nothing changed), else the game lost. */
  private badMove(mover: number, reason: string): SeatedStepResult {
    const info = { metrics: { action_is_valid: false }, action: null, actionDesc: `an invalid move: ${reason}` };
    this.errors += 1;
    if (this.errors > this.config.error_allowance) {
      const ending = `Game over: ${SEAT_NAMES[1 - mover]} wins, ${SEAT_NAMES[mover]} having moved badly ${this.errors} times in a row`;
      return this.ended(mover, 1 - mover, `${invalidMoveMessage(mover, reason)}\nPlayer ${1 - mover} has won!`, ending, info);
    }
    this.unread[mover]!.push(`${invalidMoveMessage(mover, reason)} ${RETRY_NOTE}`);
    const retry = this.config.prompt_style === 'compact' ? `Invalid: ${reason}\n` : '';
    return { observation: `${retry}${this.view(mover)}`, reward: 0, terminated: false, truncated: false, info, seat: mover, rewards: [0, 0] };
  }

  /**
   * The step of seat `mover` that ends the game, won by seat `winner` (+1, the other -1) or drawn
   * (null): `verdict` tells the mover, `ending` is render's status from now on.
   */
  private ended(mover: number, winner: number | null, verdict: string, ending: string, info: SeatedStepResult['info']): SeatedStepResult {
    const { rewards, outcome } = gameResult(SEAT_NAMES.length, winner);
    this.ending = ending;
    // an offer still waiting has no one left to answer it
    this.offer = null;
    return {
      observation: [...this.unread[mover]!.splice(0), verdict].join('\n'),
      reward: rewards[mover]!,
      terminated: true,
      truncated: false,
      info,
      seat: mover,
      rewards,
      outcome,
    };
  }

  /** Both seats' goods, values and gains, the offer on the table and whose turn it is: as text, or as bars. */
  render(mode: RenderMode): string | RgbFrame {
    const status = this.ending ?? `Turn ${this.turn + 1} of ${this.config.max_turns}, ${SEAT_NAMES[this.seatToMove]} to move`;
    const table = { resources: this.resources, values: this.deal.values, gains: this.gains(), offer: this.offer, status };
    return mode === 'text' ? negotiationText(table) : negotiationPicture(table, this.ending === null ? this.seatToMove : null);
  }

  close(): void {}

  /** A random valid move of the seat to move: deny (or pass), accept an offer it can pay, or make a random offer, each as likely. */
  sampleRandomAction(): string {
    const mover = this.seatToMove;
    const goods = this.resources[mover]!;
    const moves = ['[Deny]'];
    if (this.offer && holds(goods, this.offer.get)) moves.push('[Accept]');
    const offer = randomOffer(this.randomMoves, mover, goods);
    if (offer) moves.push(offerText(offer));
    return this.randomMoves.choice(moves);
  }

  /** Opponent `name`: 'greedy' (greedy.ts), its ties between equally good offers drawn by the env's seeded stream. */
  opponentAction(name: string): string {
    if (name !== 'greedy') throw new Error(`simple_negotiation has no opponent '${name}' (random, greedy)`);
    const mover = this.seatToMove;
    const [goods, values] = [this.resources[mover]!, this.deal.values[mover]!];
    if (this.offer && greedyAccepts(this.offer, goods, values)) return '[Accept]';
    const offers = greedyOffers(mover, goods, values);
    if (offers.length === 0) return '[Deny]';
    const offer = offerText(this.greedyDraws.choice(offers));
    return this.offer ? `[Deny] ${offer}` : offer;
  }
}

export default defineSeatedEnv({
  name: 'simple_negotiation',
  description:
    "Simple Negotiation for two seats (TextArena's SimpleNegotiation-v0): trade Wheat, Wood, Sheep, Brick and Ore valued privately, [Offer: 3 Sheep -> 1 Ore], [Accept], [Deny]; the larger gain in value wins.",
  config: Config,
  seats: { names: [...SEAT_NAMES], zeroSum: true, opponents: ['greedy'] },
  env: SimpleNegotiation,
});
