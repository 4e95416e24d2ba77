/**
 * Kuhn Poker's Nash equilibria (H. W. Kuhn, "Simplified Two-Person Poker", Contributions to the
 * Theory of Games I, 1950; as Wikipedia's "Kuhn poker" states them), and the exact expected value
 * of a hand for any two strategies.
 *
 * The first player to act picks alpha in [0, 1/3]:
 *   J: bet with probability alpha, else check and fold to a bet;
 *   Q: check, and call a bet with probability alpha + 1/3;
 *   K: bet with probability 3 alpha, else check and call a bet.
 * The second player's equilibrium strategy is unique:
 *   K: bet when checked to, call a bet;
 *   Q: check when checked to, call a bet with probability 1/3;
 *   J: bet (a bluff) with probability 1/3 when checked to, fold to a bet.
 * Together they give the first player -1/18 chips a hand for every alpha, and neither player can do
 * better against the other's strategy (the tests check both exactly).
 */
import { type Action, act, CARDS, type Card, DEALS, type Hand, handResult, isHandOver, legalActions, newHand } from './game';

/**
 * A behaviour strategy: at each decision, from the card and the hand's actions so far, the
 * probability of the bold action (bet, or call facing a bet); the rest goes to the passive one
 * (check, or fold). The history says which player decides: the first on an even count of actions.
 */
export type Strategy = (card: Card, history: readonly Action[]) => number;

export const MAX_ALPHA = 1 / 3;

/** The equilibrium for both players, the first betting a J with probability `alpha`. */
export function nashStrategy(alpha: number): Strategy {
  if (!(alpha >= 0 && alpha <= MAX_ALPHA)) throw new RangeError(`Kuhn Poker's equilibria have alpha in [0, 1/3], got ${alpha}`);
  const rank = (card: Card) => CARDS.indexOf(card);
  const boldByHistory: Record<string, readonly [number, number, number]> = {
    // by the actions so far, the bold probability with J, Q and K
    '': [alpha, 0, 3 * alpha],
    'check bet': [0, alpha + 1 / 3, 1],
    check: [1 / 3, 0, 1],
    bet: [0, 1 / 3, 1],
  };
  return (card, history) => {
    const bold = boldByHistory[history.join(' ')];
    if (!bold) throw new Error(`no decision after [${history.join(', ')}]`);
    return bold[rank(card)]!;
  };
}

/** The action of `strategy` at a decision, given a number `u` drawn uniformly from [0, 1): the bold one when u falls below its probability. */
export function strategyAction(strategy: Strategy, card: Card, history: readonly Action[], u: number): Action {
  const [passive, bold] = legalActions(history);
  if (!passive || !bold) throw new Error(`the hand [${history.join(', ')}] is over`);
  return u < strategy(card, history) ? bold : passive;
}

/** The equilibrium's action (the first player betting a J with probability `alpha`), given `u` uniform in [0, 1). */
export function nashAction(card: Card, history: readonly Action[], alpha: number, u: number): Action {
  return strategyAction(nashStrategy(alpha), card, history, u);
}

/** The first player's expected chips from `hand` on, `first` deciding for the first player and `second` for the other. */
function valueFrom(hand: Hand, first: Strategy, second: Strategy): number {
  if (isHandOver(hand.history)) return handResult(hand)[0];
  const [passive, bold] = legalActions(hand.history) as [Action, Action];
  const mover = hand.history.length % 2;
  const p = (mover === 0 ? first : second)(hand.cards[mover]!, hand.history);
  // a branch never taken adds nothing, so a pure strategy's value stays exact
  const branch = (action: Action, weight: number) => (weight === 0 ? 0 : weight * valueFrom(act(hand, action), first, second));
  return branch(passive, 1 - p) + branch(bold, p);
}

/** The first player's expected chips a hand, exactly over the six deals and every branch of the betting. */
export function expectedValue(first: Strategy, second: Strategy): number {
  return DEALS.reduce((sum, cards) => sum + valueFrom(newHand(cards, 0), first, second), 0) / DEALS.length;
}
