/**
 * Kuhn Poker's hands, as TextArena's KuhnPoker-v0 plays them (read at LeonGuertler/TextArena,
 * textarena/envs/KuhnPoker/env.py, last changed in commit a02af70b08482c319b2a7ce202b2b5f75851a9e0;
 * main at 0ce46093cd84cc81b9c4b6cb03c24a2b296a0d76; turns and errors from textarena/state.py's
 * TwoPlayerState).
 *
 * Three cards, J < Q < K. Each hand both players ante 1 chip and get one card each, dealt without
 * replacement. The first to act checks or bets 1; after a check the other checks (showdown) or bets;
 * facing a bet a player folds (the other takes the pot) or calls 1 (showdown). At a showdown the
 * higher card takes the pot. Player 1 acts first in round 1 and the first seat alternates after
 * that (TextArena's round start flips its starting player, which begins at 0).
 *
 * One point where TextArena's code and its own rules part: its prompt says a bet and a call add 1
 * chip to the pot, but its code never adds them, so every hand there moves 1 chip. Here they add
 * to the pot as the prompt and Kuhn's game say (a called bet moves 2 chips), which is the game
 * whose first player's value is -1/18 (nash.ts).
 *
 * Nothing here is random: the deal comes from the caller.
 */

/** The cards from lowest to highest. */
export const CARDS = ['J', 'Q', 'K'] as const;
export type Card = (typeof CARDS)[number];

export type Action = 'check' | 'bet' | 'call' | 'fold';

/** What each player puts in the pot before the cards are seen, and what a bet or a call adds. */
export const ANTE = 1;
const BET = 1;

/** One hand: the cards by seat (player id), the seat that acts first, and the actions so far in order. */
export interface Hand {
  readonly cards: readonly [Card, Card];
  readonly first: number;
  readonly history: readonly Action[];
}

/** Every deal of two different cards, by seat: the six a hand is equally likely to start from. */
export const DEALS: readonly (readonly [Card, Card])[] = CARDS.flatMap((mine) =>
  CARDS.filter((theirs) => theirs !== mine).map((theirs) => [mine, theirs] as const),
);

/** The seat that acts first in `round` (1-based): player 1 in round 1, then each player in turn. */
export function firstToAct(round: number): number {
  return round % 2;
}

export function newHand(cards: readonly [Card, Card], first: number): Hand {
  if (cards[0] === cards[1]) throw new Error(`both players hold ${cards[0]}: the cards are dealt without replacement`);
  return { cards, first, history: [] };
}

/** The betting is done: a fold, a bet called, or both checked. */
export function isHandOver(history: readonly Action[]): boolean {
  const last = history.at(-1);
  return last === 'fold' || last === 'call' || (history.length === 2 && last === 'check');
}

/** Whether a bet waits for an answer: the last action was a bet. */
function facingBet(history: readonly Action[]): boolean {
  return history.at(-1) === 'bet';
}

/**
 * The actions open to the player to act, in TextArena's order, the passive one (check, or fold
 * facing a bet) before the bold one (bet, or call); none once the hand is over.
 */
export function legalActions(history: readonly Action[]): Action[] {
  if (isHandOver(history)) return [];
  return facingBet(history) ? ['fold', 'call'] : ['check', 'bet'];
}

/** The seat to act: the players alternate from the first. */
export function seatToAct(hand: Hand): number {
  return (hand.first + hand.history.length) % 2;
}

/** The hand after the player to act takes `action`; throws unless the action is open to it. */
export function act(hand: Hand, action: Action): Hand {
  if (!legalActions(hand.history).includes(action)) throw new Error(`'${action}' is not open after [${hand.history.join(', ')}]`);
  return { ...hand, history: [...hand.history, action] };
}

/** The chips `seat` has put in the pot: its ante, and 1 more if it bet or called. */
export function stake(hand: Hand, seat: number): number {
  const paid = hand.history.filter((action, at) => (hand.first + at) % 2 === seat && (action === 'bet' || action === 'call')).length;
  return ANTE + paid * BET;
}

export function pot(hand: Hand): number {
  return stake(hand, 0) + stake(hand, 1);
}

/** The seat that takes the pot of a finished hand: the one that did not fold, else the higher card. */
export function handWinner(hand: Hand): number {
  if (!isHandOver(hand.history)) throw new Error(`the hand [${hand.history.join(', ')}] is not over`);
  if (hand.history.at(-1) === 'fold') return 1 - ((hand.first + hand.history.length - 1) % 2);
  return CARDS.indexOf(hand.cards[0]) > CARDS.indexOf(hand.cards[1]) ? 0 : 1;
}

/** Each seat's chips won (+) or lost (-) in a finished hand: the winner gains what the loser put in. */
export function handResult(hand: Hand): [number, number] {
  const winner = handWinner(hand);
  const won = stake(hand, 1 - winner);
  return winner === 0 ? [won, -won] : [-won, won];
}
