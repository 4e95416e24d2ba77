import { describe, expect, test } from 'bun:test';
import { Rng } from '../../../src/engine/rng';
import kuhnPokerPlugin, { SEAT_NAMES } from '../../../plugins/envs/kuhn_poker';
import {
  type Action,
  act,
  CARDS,
  type Card,
  DEALS,
  firstToAct,
  type Hand,
  handResult,
  isHandOver,
  legalActions,
  newHand,
  pot,
  seatToAct,
  stake,
} from '../../../plugins/envs/kuhn_poker/game';
import { expectedValue, MAX_ALPHA, nashAction, nashStrategy, type Strategy, strategyAction } from '../../../plugins/envs/kuhn_poker/nash';
import { parseAction, seatInstruction } from '../../../plugins/envs/kuhn_poker/texts';
import { checkEnv } from '../../../src/cli/plugins_check';
import { PluginHost } from '../../../src/host/plugin_host';
import type { RenderMode, SeatedResetResult, SeatedStepResult } from '../../../src/sdk/types';

/** The first player's value of Kuhn Poker (Kuhn 1950). */
const VALUE = -1 / 18;
const EXACT = 1e-12;
const ALPHAS = [0, 1 / 12, 1 / 6, 0.25, MAX_ALPHA];

const context = new PluginHost().envContext();

/** The env's class as the tests drive it: synchronous, with its opponent. */
interface KuhnPokerGame {
  reset(seed: number): SeatedResetResult;
  step(response: string): SeatedStepResult;
  render(mode: RenderMode): string | null;
  sampleRandomAction(): string;
  opponentAction(name: string): string;
  stateNotes(): string;
}

function newGame(config: Record<string, unknown> = {}): KuhnPokerGame {
  return new kuhnPokerPlugin.env(kuhnPokerPlugin.config.parse(config), context) as unknown as KuhnPokerGame;
}

/** Every way one hand's betting can go, as the actions in order. */
function everyBettingLine(): Action[][] {
  const lines: Action[][] = [];
  const walk = (history: Action[]) => {
    if (isHandOver(history)) lines.push(history);
    for (const action of legalActions(history)) walk([...history, action]);
  };
  walk([]);
  return lines;
}

/**
 * The chips the first and the second player to act win in a hand, from the rules as Wikipedia
 * states them: a showdown after two checks moves the ante, after a called bet the ante and the
 * bet; a fold gives the other the folder's ante.
 */
function expectedTransfer(line: readonly Action[], firstCard: Card, secondCard: Card): [number, number] {
  const firstHigher = CARDS.indexOf(firstCard) > CARDS.indexOf(secondCard);
  const showdown = (chips: number): [number, number] => (firstHigher ? [chips, -chips] : [-chips, chips]);
  const byLine: Record<string, [number, number]> = {
    'check check': showdown(1),
    'check bet fold': [-1, 1],
    'check bet call': showdown(2),
    'bet fold': [1, -1],
    'bet call': showdown(2),
  };
  return byLine[line.join(' ')]!;
}

/** Both cards of a finished game's first hand, from its render. */
function renderedCards(game: KuhnPokerGame): [Card, Card] {
  const match = /P0 ([JQK]), P1 ([JQK])/.exec(String(game.render('text')));
  if (!match) throw new Error(`no cards in ${game.render('text')}`);
  return [match[1] as Card, match[2] as Card];
}

/** The 64 pure strategies of one player: a bold-or-passive choice at each of its 6 decisions (3 cards, 2 spots). */
function pureStrategies(spots: readonly string[]): Strategy[] {
  return Array.from({ length: 64 }, (_, bits) => (card: Card, history: readonly Action[]) => {
    const decision = CARDS.indexOf(card) * 2 + spots.indexOf(history.join(' '));
    return (bits >> decision) & 1;
  });
}
const FIRST_SPOTS = ['', 'check bet'];
const SECOND_SPOTS = ['check', 'bet'];

/** A mixed strategy with every probability drawn from `rng`. */
function sampledStrategy(rng: Rng): Strategy {
  const probabilities = new Map<string, number>();
  return (card, history) => {
    const key = `${card} ${history.join(' ')}`;
    if (!probabilities.has(key)) probabilities.set(key, rng.float());
    return probabilities.get(key)!;
  };
}

describe('kuhn_poker rules', () => {
  test("TextArena's order: player 1 acts first in round 1, then the first seat alternates; players alternate within a hand", () => {
    expect([1, 2, 3, 4].map(firstToAct)).toEqual([1, 0, 1, 0]);
    let hand = newHand(['K', 'J'], 1);
    expect(seatToAct(hand)).toBe(1);
    hand = act(hand, 'check');
    expect(seatToAct(hand)).toBe(0);
    hand = act(hand, 'bet');
    expect(seatToAct(hand)).toBe(1);
  });

  test('check or bet when no bet is out, fold or call facing one; nothing once the hand is over', () => {
    expect(legalActions([])).toEqual(['check', 'bet']);
    expect(legalActions(['check'])).toEqual(['check', 'bet']);
    expect(legalActions(['bet'])).toEqual(['fold', 'call']);
    expect(legalActions(['check', 'bet'])).toEqual(['fold', 'call']);
    for (const over of [
      ['check', 'check'],
      ['bet', 'fold'],
      ['bet', 'call'],
      ['check', 'bet', 'fold'],
      ['check', 'bet', 'call'],
    ] as Action[][]) {
      expect(isHandOver(over)).toBe(true);
      expect(legalActions(over)).toEqual([]);
    }
    expect(() => act(newHand(['K', 'J'], 0), 'call')).toThrow("'call' is not open");
    expect(() => act({ ...newHand(['K', 'J'], 0), history: ['bet', 'fold'] }, 'check')).toThrow('is not open');
    expect(() => newHand(['Q', 'Q'], 0)).toThrow('without replacement');
  });

  test('the six deals are every pair of different cards', () => {
    expect(DEALS.map((deal) => deal.join(''))).toEqual(['JQ', 'JK', 'QJ', 'QK', 'KJ', 'KQ']);
  });

  test('every betting line of every deal, whoever acts first, moves the right chips (zero-sum) with the right pot', () => {
    const lines = everyBettingLine();
    expect(lines.map((line) => line.join(' ')).sort()).toEqual(['bet call', 'bet fold', 'check bet call', 'check bet fold', 'check check']);
    for (const cards of DEALS) {
      for (const first of [0, 1]) {
        for (const line of lines) {
          const hand: Hand = line.reduce(act, newHand(cards, first));
          const second = 1 - first;
          const [firstWins, secondWins] = expectedTransfer(line, cards[first]!, cards[second]!);
          const result = handResult(hand);
          expect([result[first], result[second]]).toEqual([firstWins, secondWins]);
          expect(result[0] + result[1]).toBe(0);
          expect(pot(hand)).toBe(2 + line.filter((action) => action === 'bet' || action === 'call').length);
          expect(stake(hand, first) + stake(hand, second)).toBe(pot(hand));
        }
      }
    }
  });

  test('a hand not over has no result', () => {
    expect(() => handResult(act(newHand(['K', 'J'], 0), 'bet'))).toThrow('is not over');
  });

  test('parseAction reads the first bracketed action word in any case, as TextArena does, and brackets a bare reply', () => {
    expect(parseAction('[bet]')).toBe('bet');
    expect(parseAction('I hold a K, so [Bet].')).toBe('bet');
    expect(parseAction('[CALL] or maybe [fold]')).toBe('call');
    expect(parseAction('[think] my card is low, [fold]')).toBe('fold');
    expect(parseAction('check')).toBe('check');
    expect(parseAction('Fold\n')).toBe('fold');
    for (const junk of ['', 'I check', '[raise]', '[ bet ]', '(bet)', 'bet]', '[bet', 'gibberish with no answer tag']) expect(parseAction(junk)).toBeNull();
  });
});

describe('kuhn_poker nash', () => {
  test("the strategies are Kuhn's: alpha for the first player's J, 3 alpha for its K, alpha + 1/3 to call with a Q; the second's unique one", () => {
    const alpha = 0.2;
    const nash = nashStrategy(alpha);
    expect(CARDS.map((card) => nash(card, []))).toEqual([alpha, 0, 3 * alpha]);
    expect(CARDS.map((card) => nash(card, ['check', 'bet']))).toEqual([0, alpha + 1 / 3, 1]);
    expect(CARDS.map((card) => nash(card, ['check']))).toEqual([1 / 3, 0, 1]);
    expect(CARDS.map((card) => nash(card, ['bet']))).toEqual([0, 1 / 3, 1]);
    expect(() => nashStrategy(0.34)).toThrow('alpha in [0, 1/3]');
    expect(() => nashStrategy(-0.01)).toThrow('alpha in [0, 1/3]');
    expect(() => nash('K', ['bet', 'call'])).toThrow('no decision');
  });

  test('nashAction takes the bold action when u falls below its probability', () => {
    expect(nashAction('K', [], MAX_ALPHA, 0.999)).toBe('bet');
    expect(nashAction('K', [], 0, 0)).toBe('check');
    expect(nashAction('J', [], 0.25, 0.2499)).toBe('bet');
    expect(nashAction('J', [], 0.25, 0.25)).toBe('check');
    expect(nashAction('Q', ['bet'], 0, 0.3)).toBe('call');
    expect(nashAction('Q', ['bet'], 0, 0.34)).toBe('fold');
    expect(nashAction('J', ['bet'], 0, 0)).toBe('fold');
    expect(() => strategyAction(nashStrategy(0), 'K', ['bet', 'call'], 0)).toThrow('is over');
  });

  test('nash against nash gives the first player exactly -1/18, for every alpha', () => {
    for (const alpha of ALPHAS) expect(Math.abs(expectedValue(nashStrategy(alpha), nashStrategy(alpha)) - VALUE)).toBeLessThan(EXACT);
    // the first player's alpha alone decides nothing: any first alpha against the second's strategy
    expect(Math.abs(expectedValue(nashStrategy(0), nashStrategy(MAX_ALPHA)) - VALUE)).toBeLessThan(EXACT);
  });

  test('the value is exact for plain strategies: always bold, or always passive, on both sides', () => {
    const bold: Strategy = () => 1;
    const passive: Strategy = () => 0;
    // always bold: every hand is bet and called, a showdown for 2 that each player wins half the time
    expect(expectedValue(bold, bold)).toBe(0);
    // the first always bets and the second always folds: the first wins 1 every hand
    expect(expectedValue(bold, passive)).toBe(1);
    // the first always checks and folds, the second always bets: the first loses 1 every hand
    expect(expectedValue(passive, bold)).toBe(-1);
  });

  test('no pure strategy of the first player beats -1/18 against nash; its best response earns exactly -1/18', () => {
    const values = pureStrategies(FIRST_SPOTS).map((first) => expectedValue(first, nashStrategy(MAX_ALPHA)));
    expect(Math.max(...values)).toBeLessThan(VALUE + EXACT);
    expect(Math.abs(Math.max(...values) - VALUE)).toBeLessThan(EXACT);
  });

  test('no pure strategy of the second player holds the first below -1/18, whatever alpha the first plays', () => {
    for (const alpha of ALPHAS) {
      const values = pureStrategies(SECOND_SPOTS).map((second) => expectedValue(nashStrategy(alpha), second));
      expect(Math.min(...values)).toBeGreaterThan(VALUE - EXACT);
      expect(Math.abs(Math.min(...values) - VALUE)).toBeLessThan(EXACT);
    }
  });

  test('against sampled mixed strategies nash never loses more than the value, in either seat', () => {
    const rng = Rng.fromSeed(7, 'kuhn_poker test', 'strategies');
    for (let i = 0; i < 200; i++) {
      const alpha = ALPHAS[i % ALPHAS.length]!;
      expect(expectedValue(nashStrategy(alpha), sampledStrategy(rng))).toBeGreaterThan(VALUE - EXACT);
      expect(expectedValue(sampledStrategy(rng), nashStrategy(alpha))).toBeLessThan(VALUE + EXACT);
    }
  });
});

describe('kuhn_poker env', () => {
  test("reset: P1 acts first and sees its card and its actions; each seat's instruction is TextArena's prompt", () => {
    const game = newGame();
    const reset = game.reset(0);
    expect(reset.seat).toBe(1);
    expect(reset.instructions).toEqual([seatInstruction(0, 1), seatInstruction(1, 1)]);
    expect(reset.info.instruction).toBe(reset.instructions[1]!);
    expect(reset.instructions[0]!.startsWith('You are Player 0 in a 1 round game of Kuhn Poker.\nGame Rules:\n')).toBe(true);
    expect(reset.observation).toMatch(/^### Starting round 1 out of 1 rounds\. Your card is: '[JQK]'\nYour available actions are: '\[check\]', '\[bet\]'$/);
    expect(kuhnPokerPlugin.seats).toEqual({ names: ['P0', 'P1'], zeroSum: true, opponents: ['nash'] });
    expect(SEAT_NAMES).toEqual(['P0', 'P1']);
  });

  test('every betting line played through the env pays each seat its chips at the end, 0 before, with win and loss', () => {
    const dealt = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      for (const line of everyBettingLine()) {
        const game = newGame();
        let seat = game.reset(seed).seat;
        const movers: number[] = [];
        let last: SeatedStepResult | undefined;
        for (const action of line) {
          movers.push(seat);
          last = game.step(`[${action}]`);
          expect(last.info.metrics.action_is_valid).toBe(true);
          expect(last.info.action).toBe(`[${action}]`);
          if (!last.terminated) expect(last.rewards).toEqual([0, 0]);
          seat = last.seat;
        }
        expect(movers).toEqual(line.map((_, at) => (1 + at) % 2));
        expect(last!.terminated).toBe(true);
        const cards = renderedCards(game);
        dealt.add(cards.join(''));
        const [first, second] = expectedTransfer(line, cards[1], cards[0]);
        expect(last!.rewards).toEqual([second, first]);
        expect(last!.reward).toBe(last!.rewards[last!.seat]!);
        expect(last!.outcome).toEqual(first > 0 ? ['loss', 'win'] : ['win', 'loss']);
      }
    }
    expect(dealt.size).toBe(6);
  });

  test("hidden information: before a hand's showdown no observation of a seat names the other's card", () => {
    for (const rounds of [1, 3]) {
      for (let seed = 0; seed < 40; seed++) {
        const game = newGame({ rounds });
        const reset = game.reset(seed);
        const views: { seat: number; observation: string }[] = [{ seat: reset.seat, observation: reset.observation }];
        for (;;) {
          const step = game.step(game.sampleRandomAction());
          if (step.terminated) break;
          views.push({ seat: step.seat, observation: step.observation });
        }
        // the render of a finished game shows every hand's cards, in order
        const hands = [...String(game.render('text')).matchAll(/P0 ([JQK]), P1 ([JQK])/g)].map((match) => [match[1]!, match[2]!]);
        expect(hands.length).toBe(rounds);
        let round = 0;
        for (const { seat, observation } of views) {
          // what follows the last hand's end is about the hand being played
          const current = observation.split(/^Showdown: .*$|^Player \d has folded\..*$/m).at(-1)!;
          round = Number(/### Starting round (\d+)/.exec(current)?.[1] ?? round);
          const own = hands[round - 1]![seat]!;
          const other = hands[round - 1]![1 - seat]!;
          expect(current).toContain(`Your card is: '${own}'`);
          expect(current).not.toMatch(new RegExp(`\\b${other}\\b`));
        }
      }
    }
  });

  test('compact style: a decision shows exactly its information set (the seat, its card, the moves), the same whatever the other holds; the notes read its card', () => {
    const seen = new Map<string, Set<string>>();
    for (let seed = 0; seed < 300; seed++) {
      const game = newGame({ prompt_style: 'compact' });
      const reset = game.reset(seed);
      expect(reset.instructions[1]).toBe('One-card poker, three cards. You are P1.');
      // the seat's card is the only card letter a compact prompt holds
      expect(reset.instructions.join(' ')).not.toMatch(/[JQK]/);
      const cards = () => [...String(game.render('text')).matchAll(/P0 ([JQK]), P1 ([JQK])/g)][0]!;
      const views: { seat: number; observation: string; moves: string[]; notes?: string }[] = [{ seat: reset.seat, observation: reset.observation, moves: [] }];
      const moves: string[] = [];
      for (;;) {
        views.at(-1)!.notes = game.stateNotes();
        const action = game.sampleRandomAction();
        moves.push(`${SEAT_NAMES[views.at(-1)!.seat]} ${action}`);
        const step = game.step(action);
        if (step.terminated) break;
        views.push({ seat: step.seat, observation: step.observation, moves: [...moves] });
      }
      const dealt = cards();
      for (const { seat, observation, moves: before, notes } of views) {
        const own = dealt[seat + 1]!;
        // the warm start's notes read the card of the seat to act, and where it ranks
        expect(notes).toBe({ J: 'J low', Q: 'Q mid', K: 'K high' }[own]);
        const key = `${seat} ${own} ${before.join(', ')}`;
        if (!seen.has(key)) seen.set(key, new Set());
        seen.get(key)!.add(observation);
        expect(observation).toStartWith(`Moves: ${before.join(', ') || 'none'}. Open: `);
        expect(observation).toEndWith(`. Card ${own}`);
      }
    }
    // all 12 information sets of one hand, each shown one way only
    expect(seen.size).toBe(12);
    for (const shown of seen.values()) expect(shown.size).toBe(1);
    const retry = newGame({ prompt_style: 'compact' });
    retry.reset(1);
    expect(retry.step('no idea').observation).toMatch(
      /^Invalid: Action must be \[Check\], \[Bet\], \[Call\], or \[Fold\]\.\nMoves: none\. Open: \[check\] \[bet\]\. Card [JQK]$/,
    );
  });

  test('random games of 1 to 4 rounds are zero-sum, pay only at the end, and more chips wins', () => {
    let draws = 0;
    for (const rounds of [1, 2, 3, 4]) {
      for (let seed = 0; seed < 50; seed++) {
        const game = newGame({ rounds });
        game.reset(seed);
        const returns = [0, 0];
        let step: SeatedStepResult;
        let moves = 0;
        do {
          step = game.step(game.sampleRandomAction());
          expect(step.info.metrics.action_is_valid).toBe(true);
          if (!step.terminated) expect(step.rewards).toEqual([0, 0]);
          returns[0]! += step.rewards[0]!;
          returns[1]! += step.rewards[1]!;
          moves++;
        } while (!step.terminated);
        expect(moves).toBeGreaterThanOrEqual(2 * rounds);
        expect(moves).toBeLessThanOrEqual(3 * rounds);
        expect(returns[0]! + returns[1]!).toBe(0);
        const [outcome0, outcome1] = step.outcome!;
        if (returns[0] === 0) draws++;
        expect(outcome0).toBe(returns[0]! > 0 ? 'win' : returns[0]! < 0 ? 'loss' : 'draw');
        expect(outcome1).toBe(returns[1]! > 0 ? 'win' : returns[1]! < 0 ? 'loss' : 'draw');
        expect(step.observation).toMatch(/(won by having more chips|had the same number of chips)/);
        expect(String(game.render('text'))).toContain(`Chips: P0 ${returns[0]}, P1 ${returns[1]}`);
      }
    }
    expect(draws).toBeGreaterThan(0);
  });

  test('in a game of several rounds the first seat alternates and a new hand tells each seat its new card', () => {
    const game = newGame({ rounds: 3 });
    expect(game.reset(5).seat).toBe(1);
    let step = game.step('[bet]');
    expect(step.seat).toBe(0);
    step = game.step('[fold]');
    expect(step.terminated).toBe(false);
    expect(step.rewards).toEqual([0, 0]);
    // round 2: P0 acts first, and sees how round 1 ended before its new card
    expect(step.seat).toBe(0);
    expect(step.observation.split('\n')).toEqual([
      "Player 0, submitted move: '[fold]'.",
      "Player 0 has folded. Current scores: Player 0: '-1'; Player 1: '1'",
      expect.stringMatching(/^### Starting round 2 out of 3 rounds\. Your card is: '[JQK]'$/),
      "Your available actions are: '[check]', '[bet]'",
    ]);
    step = game.step('[check]');
    expect(step.seat).toBe(1);
    expect(step.observation.split('\n')).toEqual([
      "Player 1, submitted move: '[bet]'.",
      "Player 0, submitted move: '[fold]'.",
      "Player 0 has folded. Current scores: Player 0: '-1'; Player 1: '1'",
      expect.stringMatching(/^### Starting round 2 out of 3 rounds\. Your card is: '[JQK]'$/),
      "Player 0, submitted move: '[check]'.",
      "Your available actions are: '[check]', '[bet]'",
    ]);
    step = game.step('[bet]');
    // P0's second decision of the hand says its card again
    expect(step.observation.split('\n')).toEqual([
      "Player 0, submitted move: '[check]'.",
      "Player 1, submitted move: '[bet]'.",
      expect.stringMatching(/^Your card is: '[JQK]'$/),
      "Your available actions are: '[fold]', '[call]'",
    ]);
    expect(String(game.render('text')).split('\n')).toEqual([
      expect.stringMatching(/^Round 1: pot 3; P1 \[bet\], P0 \[fold\]; P0 [JQK], P1 [JQK]; P0 -1, P1 1$/),
      'Round 2: pot 3; P0 [check], P1 [bet]; cards hidden; P0 to act',
      'Chips: P0 -1, P1 1',
    ]);
  });

  test("an unreadable answer costs its seat a retry: nobody's reward, the state and the seat to act stay", () => {
    const game = newGame();
    game.reset(3);
    game.step('[check]');
    const before = game.render('text');
    const step = game.step('gibberish with no answer tag');
    expect(step.info.metrics.action_is_valid).toBe(false);
    expect(step.info.action).toBeNull();
    expect(step.terminated).toBe(false);
    expect(step.seat).toBe(0);
    expect(step.rewards).toEqual([0, 0]);
    expect(step.reward).toBe(0);
    expect(game.render('text')).toBe(before);
    expect(step.observation.split('\n')).toEqual([
      'Player 0 attempted an invalid move. Reason: Action must be [Check], [Bet], [Call], or [Fold]. Please resubmit a valid move and remember to follow the game rules to avoid penalties.',
      expect.stringMatching(/^Your card is: '[JQK]'$/),
      "Your available actions are: '[check]', '[bet]'",
    ]);
    // a valid move clears the count: the next seat may err once too
    expect(game.step('[bet]').info.metrics.action_is_valid).toBe(true);
    const closed = game.step('[check]');
    expect(closed.info.metrics.action_is_valid).toBe(false);
    expect(closed.terminated).toBe(false);
    expect(closed.observation).toContain('Reason: Action must be [fold], [call]. Please resubmit');
    expect(game.step('[call]').terminated).toBe(true);
  });

  test('the second bad answer in a row forfeits: the forfeiter loses its stake and the game, the other seat loses nothing', () => {
    const game = newGame();
    game.reset(3);
    game.step('[bet]');
    expect(game.step('[raise]').terminated).toBe(false);
    const step = game.step('[check]');
    expect(step.terminated).toBe(true);
    expect(step.seat).toBe(0);
    expect(step.rewards).toEqual([-1, 1]);
    expect(step.reward).toBe(-1);
    expect(step.outcome).toEqual(['loss', 'win']);
    expect(step.observation).toContain(
      'Player 0 attempted an invalid move. Reason: Action must be [fold], [call].\nPlayer 0 forfeits the game; Player 1 has won',
    );
    expect(String(game.render('text'))).toMatch(/^Round 1: pot 3; P1 \[bet\]; P0 [JQK], P1 [JQK]; P0 forfeits the game\nChips: P0 -1, P1 1$/);
  });

  test('with error_allowance 0 the first bad answer forfeits; a forfeit never pays more than a fold, and leaves its seat behind', () => {
    const strict = newGame({ error_allowance: 0 });
    expect(strict.reset(0).seat).toBe(1);
    const first = strict.step('no idea');
    expect(first.terminated).toBe(true);
    expect(first.rewards).toEqual([1, -1]);
    expect(first.outcome).toEqual(['win', 'loss']);

    // ahead by the chip it won in round 1, the forfeiter still ends 1 chip down
    const ahead = newGame({ rounds: 3, error_allowance: 0 });
    ahead.reset(1);
    ahead.step('[bet]');
    ahead.step('[fold]');
    ahead.step('[check]');
    const forfeit = ahead.step('?');
    expect(forfeit.seat).toBe(1);
    expect(forfeit.rewards).toEqual([1, -1]);
    expect(forfeit.outcome).toEqual(['win', 'loss']);

    // behind by 1, it loses its ante on top, as folding would
    const behind = newGame({ rounds: 2, error_allowance: 0 });
    behind.reset(1);
    behind.step('[bet]');
    behind.step('[fold]');
    expect(behind.step('?').rewards).toEqual([-2, 2]);
  });

  test('the nash opponent plays open actions in both seats; another name is refused', () => {
    const game = newGame({ rounds: 2 });
    for (let seed = 0; seed < 20; seed++) {
      game.reset(seed);
      let step: SeatedStepResult;
      do step = game.step(game.opponentAction('nash'));
      while (step.info.metrics.action_is_valid === true && !step.terminated);
      expect(step.info.metrics.action_is_valid).toBe(true);
    }
    expect(() => game.opponentAction('minimax')).toThrow("no opponent 'minimax'");
  });

  test('2000 games of nash against nash: the seat that acts first (P1) averages -1/18 within 0.05', () => {
    const game = newGame();
    let total = 0;
    for (let seed = 0; seed < 2000; seed++) {
      const first = game.reset(seed).seat;
      expect(first).toBe(1);
      let step: SeatedStepResult;
      do step = game.step(game.opponentAction('nash'));
      while (!step.terminated);
      total += step.rewards[first]!;
    }
    expect(Math.abs(total / 2000 - VALUE)).toBeLessThan(0.05);
  });

  test('agentic plugins check passes every check, the seated ones included, and skips none, in both prompt styles', async () => {
    for (const settings of [{}, { prompt_style: 'compact' }]) {
      const report = await checkEnv(kuhnPokerPlugin, settings, { context, episodes: 8 });
      const failed = report.checks.filter((check) => check.status === 'fail');
      const skipped = report.checks.filter((check) => check.status === 'skip');
      expect(failed).toEqual([]);
      expect(skipped).toEqual([]);
      expect(report.checks.map((check) => check.name)).toContain('bad_answer');
      expect(report.passed).toBe(true);
    }
  });
});
