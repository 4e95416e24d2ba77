import { describe, expect, test } from 'bun:test';
import simpleNegotiationPlugin, { SEAT_NAMES } from '../../../plugins/envs/simple_negotiation';
import {
  afterTrade,
  BASE_VALUES,
  type Deal,
  dealFrom,
  holds,
  type Inventory,
  inventoryValue,
  type Offer,
  offerText,
  RESOURCES,
  tradeGain,
  valueRange,
} from '../../../plugins/envs/simple_negotiation/game';
import { gainfulOffers, greedyAccepts, greedyOffers } from '../../../plugins/envs/simple_negotiation/greedy';
import { negotiationPicture } from '../../../plugins/envs/simple_negotiation/render';
import { inventoryLines, readReply, seatInstruction } from '../../../plugins/envs/simple_negotiation/texts';
import { checkEnv } from '../../../src/cli/plugins_check';
import { Rng } from '../../../src/engine/rng';
import { PluginHost } from '../../../src/host/plugin_host';
import { defaultTokenizer } from '../../../src/model/default_tokenizer';
import type { RenderMode, RgbFrame, SeatedResetResult, SeatedStepResult } from '../../../src/sdk/types';

const context = new PluginHost().envContext();

/** The env's class as the tests drive it: synchronous, with its opponent. */
interface NegotiationGame {
  reset(seed: number): SeatedResetResult;
  step(response: string): SeatedStepResult;
  render(mode: RenderMode): string | RgbFrame;
  sampleRandomAction(): string;
  opponentAction(name: string): string;
}

function newGame(config: Record<string, unknown> = {}): NegotiationGame {
  return new simpleNegotiationPlugin.env(simpleNegotiationPlugin.config.parse(config), context) as unknown as NegotiationGame;
}

/** The deal the env draws for `seed`. */
const dealOf = (seed: number): Deal => dealFrom(Rng.fromSeed(seed, 'simple_negotiation', 'deal'));

/**
 * Seed 3's deal, which the tests below trade with:
 * P0 has Wheat 15, Wood 14, Sheep 20, Brick 20, Ore 8 and values them 6, 8, 13, 27, 39;
 * P1 has Wheat 5, Wood 18, Sheep 23, Brick 18, Ore 24 and values them 6, 9, 13, 25, 40.
 */
const SEED = 3;
const inventory = (...units: number[]): Inventory => Object.fromEntries(RESOURCES.map((resource, at) => [resource, units[at]!])) as Inventory;

/** Each seat's goods as render('text') shows them. */
function goodsOf(game: NegotiationGame): Inventory[] {
  const lines = String(game.render('text')).split('\n');
  return SEAT_NAMES.map((name) =>
    inventory(
      ...lines
        .find((line) => line.startsWith(`${name} has`))!
        .split(/\s+/)
        .slice(2, 7)
        .map(Number),
    ),
  );
}

/** Plays `replies` in turn from seed `seed`'s start; every step's result. */
function play(game: NegotiationGame, replies: string[], seed = SEED): SeatedStepResult[] {
  game.reset(seed);
  return replies.map((reply) => game.step(reply));
}

/** Plays a game to its end, each seat's move from `player(seat)`; every step. */
function wholeGame(game: NegotiationGame, seed: number, player: (seat: number) => string): SeatedStepResult[] {
  let seat = game.reset(seed).seat;
  const steps: SeatedStepResult[] = [];
  do {
    steps.push(game.step(player(seat)));
    seat = steps.at(-1)!.seat;
  } while (!steps.at(-1)!.terminated);
  return steps;
}

describe('simple_negotiation goods and trades', () => {
  test("TextArena's resources, base values and value ranges (the base less or more 20%, within 5 to 40)", () => {
    expect(RESOURCES).toEqual(['Wheat', 'Wood', 'Sheep', 'Brick', 'Ore']);
    expect(BASE_VALUES).toEqual({ Wheat: 5, Wood: 10, Sheep: 15, Brick: 25, Ore: 40 });
    expect(RESOURCES.map(valueRange)).toEqual([
      [5, 6],
      [8, 12],
      [12, 18],
      [20, 30],
      [32, 40],
    ]);
  });

  test('a deal gives each seat 5 to 25 of each resource and values in range, both ends reached; one seed deals one way', () => {
    const quantities = new Set<number>();
    const wheatValues = new Set<number>();
    for (let seed = 0; seed < 300; seed++) {
      const deal = dealOf(seed);
      for (const seat of [0, 1]) {
        for (const resource of RESOURCES) {
          const [low, high] = valueRange(resource);
          expect(deal.values[seat]![resource]).toBeGreaterThanOrEqual(low);
          expect(deal.values[seat]![resource]).toBeLessThanOrEqual(high);
          expect(deal.resources[seat]![resource]).toBeGreaterThanOrEqual(5);
          expect(deal.resources[seat]![resource]).toBeLessThanOrEqual(25);
          quantities.add(deal.resources[seat]![resource]);
        }
        wheatValues.add(deal.values[seat]!.Wheat);
      }
    }
    expect(quantities.size).toBe(21);
    expect([...wheatValues].sort()).toEqual([5, 6]);
    expect(dealOf(7)).toEqual(dealOf(7));
    expect(dealOf(7)).not.toEqual(dealOf(8));
  });

  test('a trade moves the offered goods to the other and the asked goods back; every resource is conserved; a shortfall throws', () => {
    const deal = dealOf(SEED);
    const offer: Offer = { from: 1, give: { Ore: 2, Wood: 1 }, get: { Wheat: 10 } };
    const [p0, p1] = afterTrade(deal.resources, offer);
    expect(p0).toEqual({ ...deal.resources[0], Wheat: 5, Ore: 10, Wood: 15 });
    expect(p1).toEqual({ ...deal.resources[1], Wheat: 15, Ore: 22, Wood: 17 });
    for (const resource of RESOURCES) expect(p0[resource] + p1[resource]).toBe(deal.resources[0][resource] + deal.resources[1][resource]);
    // the deal itself is left as it was
    expect(deal.resources[0].Wheat).toBe(15);
    expect(() => afterTrade(deal.resources, { from: 0, give: { Ore: 9 }, get: { Wheat: 1 } })).toThrow('needs goods a player lacks');
    expect(() => afterTrade(deal.resources, { from: 0, give: { Ore: 1 }, get: { Wheat: 6 } })).toThrow('needs goods a player lacks');
  });

  test("values and gains: a seat's goods are priced at its own values; a trade gains a seat what comes in less what goes out, at its prices", () => {
    const values = inventory(6, 8, 13, 27, 39);
    expect(inventoryValue(inventory(15, 14, 20, 20, 8), values)).toBe(15 * 6 + 14 * 8 + 20 * 13 + 20 * 27 + 8 * 39);
    const offer: Offer = { from: 0, give: { Wheat: 5 }, get: { Ore: 1 } };
    expect(tradeGain(offer, 0, values)).toBe(39 - 30);
    expect(tradeGain(offer, 1, values)).toBe(30 - 39);
    expect(holds(inventory(5, 0, 0, 0, 0), { Wheat: 5 })).toBe(true);
    expect(holds(inventory(5, 0, 0, 0, 0), { Wheat: 5, Ore: 1 })).toBe(false);
    expect(offerText({ give: { Sheep: 3, Ore: 2 }, get: { Brick: 5 } })).toBe('[Offer: 3 Sheep, 2 Ore -> 5 Brick]');
  });
});

describe('simple_negotiation replies', () => {
  test('an offer is read as SimpleNegotiation-v0 reads it: the colon, "I give", case, line breaks and trailing dots as it allows', () => {
    const offer = (reply: string) => readReply(reply).offer;
    expect(offer('[Offer: 3 Sheep, 2 Ore -> 5 Brick, 2 Sheep]')).toEqual({ give: { Sheep: 3, Ore: 2 }, get: { Brick: 5, Sheep: 2 } });
    expect(offer('Let us trade. [offer 2 wheat -> 1 ORE] Deal?')).toEqual({ give: { Wheat: 2 }, get: { Ore: 1 } });
    expect(offer('[Offer: I give 2 Wheat and 1 Wood -> 1 Ore...]')).toEqual({ give: { Wheat: 2, Wood: 1 }, get: { Ore: 1 } });
    expect(offer('[Offer:\n  1 Wood,\n  2 Wood\n  -> 3 Sheep.]')).toEqual({ give: { Wood: 3 }, get: { Sheep: 3 } });
    // a plural names its resource (TextArena: only Sheeps and Woods)
    expect(offer('[Offer: 2 Bricks -> 2 Sheeps, 1 Ores]')).toEqual({ give: { Brick: 2 }, get: { Sheep: 2, Ore: 1 } });
    // the first offer counts; a reply without brackets is bracketed first
    expect(offer('[Offer: 1 Wheat -> 1 Wood] or [Offer: 2 Ore -> 1 Wheat]')).toEqual({ give: { Wheat: 1 }, get: { Wood: 1 } });
    expect(offer('Offer: 4 Wheat -> 1 Sheep')).toEqual({ give: { Wheat: 4 }, get: { Sheep: 1 } });
  });

  test('an offer TextArena cannot read is malformed: one side, no count, an unknown or zero good, two arrows', () => {
    for (const reply of [
      '[Offer: 2 Wheat]',
      '[Offer: Wheat -> Ore]',
      '[Offer: 2 Gold -> 1 Ore]',
      '[Offer: 0 Wheat -> 1 Ore]',
      '[Offer: 1 Wheat -> 1 Ore -> 1 Wood]',
      '[Offer: ]',
    ])
      expect(readReply(reply).offer).toBe('malformed');
    // no offer at all: the pattern needs "[Offer" and something before the bracket closes
    for (const reply of ['[Offer]', 'an offer: 2 Wheat -> 1 Ore]', '[Accept]']) expect(readReply(reply).offer).toBeNull();
  });

  test('[Accept] and [Deny] count anywhere, in any case; a bare word is bracketed; anything else names no action', () => {
    expect(readReply('[Accept]')).toEqual({ accept: true, deny: false, offer: null });
    expect(readReply('Fine by me, I [ACCEPT].')).toEqual({ accept: true, deny: false, offer: null });
    expect(readReply(' accept\n')).toEqual({ accept: true, deny: false, offer: null });
    expect(readReply('Deny')).toEqual({ accept: false, deny: true, offer: null });
    expect(readReply('[Deny] [Offer: 1 Ore -> 6 Wheat]')).toEqual({ accept: false, deny: true, offer: { give: { Ore: 1 }, get: { Wheat: 6 } } });
    for (const reply of ['', 'I accept', 'hello there', '[Pass]', '(Accept)', 'gibberish with no answer tag']) {
      expect(readReply(reply)).toEqual({ accept: false, deny: false, offer: null });
    }
  });
});

describe('simple_negotiation env', () => {
  test("the textarena style: TextArena's prompt with the seat's goods, then its goods and the turn each move", () => {
    const game = newGame();
    const reset = game.reset(SEED);
    const deal = dealOf(SEED);
    expect(reset.seat).toBe(0);
    expect(reset.instructions).toEqual([0, 1].map((seat) => seatInstruction(seat, deal.resources[seat]!, deal.values[seat]!, 10)));
    expect(reset.info.instruction).toBe(reset.instructions[0]!);
    expect(reset.instructions[0]).toStartWith(
      'You are Player 0 in the Negotiation Game.\nYou have some resources, and your task is to trade such that the total value of your resources increases.\nThe resources and associated values you currently have are:\n\t+ [Wheat]   Qty: 15   Value: 6\n\t+ [Wood]    Qty: 14   Value: 8\n',
    );
    expect(reset.instructions[1]).toContain('\t+ [Ore]     Qty: 24   Value: 40\nAt each turn, you can talk to your opponent and make a trade offer.');
    expect(reset.instructions[1]).toEndWith(
      "  - '[Deny]': To deny an incoming offer (default).\nEvery turn must use at least one of these tokens; '[Deny]' alone makes no trade.\nThe game lasts for 10 turns in total.",
    );
    expect(reset.observation).toBe(`${inventoryLines(deal.resources[0], deal.values[0])}\nTurn 1 of 10.`);
    const offered = game.step('I need ore. [Offer: 5 Wheat -> 1 Ore]');
    expect(offered.seat).toBe(1);
    expect(offered.info.action).toBe('[Offer: 5 Wheat -> 1 Ore]');
    expect(offered.observation).toBe(
      `Player 0 made the following offer to Player 1: Offered items: 5 Wheat -> Requested items: 1 Ore\n${inventoryLines(deal.resources[1], deal.values[1])}\nTurn 2 of 10.`,
    );
    // what a seat writes besides its tokens is not shown to the other
    expect(offered.observation).not.toContain('I need ore');
    const accepted = game.step('[Accept]');
    expect(accepted.info.action).toBe('[Accept]');
    expect(accepted.observation).toStartWith(
      'Player 0 made the following offer to Player 1: Offered items: 5 Wheat -> Requested items: 1 Ore\nPlayer 1 accepted the trade offer from Player 0.\nPlayer 1 made no new trade offer.\nThe resources and associated values you currently have are:\n\t+ [Wheat]   Qty: 10   Value: 6\n',
    );
    expect(accepted.observation).toEndWith('\t+ [Ore]     Qty: 9    Value: 39\nTurn 3 of 10.');
  });

  test('an accepted offer moves the goods both ways; a denied one moves nothing and lapses, so a later [Accept] finds nothing to take', () => {
    const game = newGame();
    const deal = dealOf(SEED);
    const [, accepted] = play(game, ['[Offer: 5 Wheat -> 1 Ore]', '[Accept]']);
    expect(accepted!.info.actionDesc).toBe('Player 1 accepted the trade offer from Player 0. Player 1 made no new trade offer.');
    expect(goodsOf(game)).toEqual(afterTrade(deal.resources, { from: 0, give: { Wheat: 5 }, get: { Ore: 1 } }));
    const denied = play(game, ['[Offer: 5 Wheat -> 1 Ore]', 'No. [Deny]', '[Accept]']);
    expect(denied[1]!.info.action).toBe('[Deny]');
    expect(denied[1]!.observation).toContain('Player 1 rejected the trade offer.\nPlayer 1 made no new trade offer.');
    // the offer lapsed on P1's turn: P0's [Accept] takes nothing, and passes
    expect(denied[2]!.info).toMatchObject({ metrics: { action_is_valid: true }, action: '[Deny]', actionDesc: 'Player 0 made no new trade offer.' });
    expect(goodsOf(game)).toEqual([...deal.resources]);
    expect(String(game.render('text'))).toEndWith('No offer on the table.');
  });

  test('a counter-offer denies the offer on the table; [Accept] with an offer trades first, and the new offer may spend what came in', () => {
    const game = newGame();
    const deal = dealOf(SEED);
    const countered = play(game, ['[Offer: 10 Wheat -> 1 Ore]', '[Offer: 1 Ore -> 6 Wheat]']);
    expect(countered[1]!.info.action).toBe('[Deny] [Offer: 1 Ore -> 6 Wheat]');
    expect(countered[1]!.observation).toContain('Player 1 rejected the trade offer.\nPlayer 1 made the following offer to Player 0');
    expect(goodsOf(game)).toEqual([...deal.resources]);
    // P1 holds 5 Wheat: 12 is beyond it until it takes P0's 10
    const alone = play(game, ['[Offer: 10 Wheat -> 1 Ore]', '[Offer: 12 Wheat -> 1 Brick]']);
    expect(alone[1]!.info.metrics.action_is_valid).toBe(false);
    const both = play(game, ['[Offer: 10 Wheat -> 1 Ore]', '[Accept] [Offer: 12 Wheat -> 1 Brick]']);
    expect(both[1]!.info.action).toBe('[Accept] [Offer: 12 Wheat -> 1 Brick]');
    expect(goodsOf(game)[1]!.Wheat).toBe(15);
    expect(String(game.render('text'))).toEndWith('Offer: P1 gives 12 Wheat for 1 Brick; P0 to answer');
  });

  test("a bad move costs a retry and changes nothing (TextArena's reasons); the second in a row loses the game; a good one resets the count", () => {
    const game = newGame();
    game.reset(SEED);
    const before = game.render('text');
    const retry = game.step('I would like some ore please');
    expect(retry).toMatchObject({ terminated: false, seat: 0, reward: 0, rewards: [0, 0], info: { metrics: { action_is_valid: false }, action: null } });
    expect(retry.observation).toStartWith(
      "Player 0 attempted an invalid move. Reason: Player 0 used none of the tokens '[Offer: ...]', '[Accept]' and '[Deny]'. Please resubmit a valid move",
    );
    expect(retry.observation).toEndWith('Turn 1 of 10.');
    expect(game.render('text')).toBe(before);
    // P0 holds 8 Ore
    const lost = game.step('[Offer: 9 Ore -> 1 Wheat]');
    expect(lost).toMatchObject({ terminated: true, seat: 0, reward: -1, rewards: [-1, 1], outcome: ['loss', 'win'] });
    expect(lost.observation).toEndWith('Reason: Player 0 tried to make a trade offer without having the necessary resources.\nPlayer 1 has won!');
    expect(game.render('text')).toStartWith('Game over: P1 wins, P0 having moved badly 2 times in a row\n');
    expect(play(game, ['[Offer: 2 Gold -> 1 Ore]'])[0]!.observation).toContain('Reason: Player 0 made a trade offer in an incorrect format.');
    // a good move between two bad ones resets the count
    const steps = play(game, ['?', '[Deny]', '[Deny]', '?', '?']);
    expect(steps.map((step) => step.terminated)).toEqual([false, false, false, false, true]);
    expect(steps.at(-1)!.rewards).toEqual([-1, 1]);
  });

  test('accepting without the goods asked is a bad move, and the offer stays to be answered; error_allowance 0 and 2', () => {
    const game = newGame();
    const steps = play(game, ['[Offer: 1 Ore -> 20 Wheat]', '[Accept]']);
    expect(steps[1]!.observation).toStartWith(
      'Player 1 attempted an invalid move. Reason: Player tried accepting a trade without having the necessary resources. Please resubmit',
    );
    // the offer is said again after the retry, since it waits for an answer still
    expect(steps[1]!.observation).toContain('Player 0 made the following offer to Player 1: Offered items: 1 Ore -> Requested items: 20 Wheat');
    expect(game.step('[Deny]').info.metrics.action_is_valid).toBe(true);
    // a game lost with an offer waiting leaves none on the table
    expect(play(game, ['[Offer: 1 Ore -> 20 Wheat]', '[Accept]', '[Accept]']).at(-1)!.outcome).toEqual(['win', 'loss']);
    expect(String(game.render('text'))).toEndWith('No offer on the table.');
    const strict = newGame({ error_allowance: 0 });
    strict.reset(0);
    expect(strict.step('?').outcome).toEqual(['loss', 'win']);
    const lenient = newGame({ error_allowance: 2 });
    lenient.reset(0);
    expect([lenient.step('?').terminated, lenient.step('?').terminated, lenient.step('?').terminated]).toEqual([false, false, true]);
  });

  test('the game ends after max_turns turns with the verdict; with no trade both gain 0 and draw; an offer on the last turn lapses', () => {
    const game = newGame();
    const steps = play(game, [...Array(9).fill('[Deny]'), '[Offer: 1 Wheat -> 1 Ore]']);
    expect(steps.slice(0, -1).every((step) => !step.terminated && step.rewards.every((reward) => reward === 0))).toBe(true);
    expect(steps.map((step) => step.seat)).toEqual([1, 0, 1, 0, 1, 0, 1, 0, 1, 1]);
    const last = steps.at(-1)!;
    expect(last).toMatchObject({ terminated: true, seat: 1, reward: 0, rewards: [0, 0], outcome: ['draw', 'draw'] });
    expect(last.observation).toEndWith('Same change in inventory value for all players. Draw. Inventory value changes: Player 0 0, Player 1 0.');
    expect(String(game.render('text'))).toStartWith('Game over: a draw');
    expect(String(game.render('text'))).toEndWith('No offer on the table.');
    const short = newGame({ max_turns: 2 });
    expect(play(short, ['[Deny]', '[Deny]']).map((step) => step.terminated)).toEqual([false, true]);
    expect(simpleNegotiationPlugin.config.safeParse({ max_turns: 1 }).success).toBe(false);
  });

  test('the seat whose value gained more wins (+1, the other -1), whoever gained at all, and nothing is paid before the end', () => {
    const deal = dealOf(SEED);
    // P0 pays 5 Wheat (6 each to it) for 1 Ore (39 to it); P1 loses 40 for 30
    const p0Trade: Offer = { from: 0, give: { Wheat: 5 }, get: { Ore: 1 } };
    expect([tradeGain(p0Trade, 0, deal.values[0]), tradeGain(p0Trade, 1, deal.values[1])]).toEqual([9, -10]);
    const game = newGame();
    const won = play(game, ['[Offer: 5 Wheat -> 1 Ore]', '[Accept]', ...Array(8).fill('[Deny]')]);
    expect(won.slice(0, -1).every((step) => step.rewards[0] === 0 && step.rewards[1] === 0)).toBe(true);
    expect(won.at(-1)).toMatchObject({ terminated: true, seat: 1, reward: -1, rewards: [1, -1], outcome: ['win', 'loss'] });
    expect(won.at(-1)!.observation).toEndWith('Player 0 won by having a larger gain in inventory value. Inventory value changes: Player 0 +9, Player 1 -10.');
    // a trade both gain by, P1 more (P0 prices Brick at 27, P1 at 25; Ore 39 and 40): the larger gain wins, not any gain
    const bothGain: Offer = { from: 1, give: { Brick: 3 }, get: { Ore: 2 } };
    expect([tradeGain(bothGain, 0, deal.values[0]), tradeGain(bothGain, 1, deal.values[1])]).toEqual([81 - 78, 80 - 75]);
    const lost = play(game, ['[Deny]', '[Offer: 3 Brick -> 2 Ore]', '[Accept]', ...Array(7).fill('[Deny]')]);
    expect(lost.at(-1)).toMatchObject({ terminated: true, seat: 1, reward: 1, rewards: [-1, 1], outcome: ['loss', 'win'] });
  });

  test('random games are zero-sum and pay only at the end: +1/-1 or 0/0, with outcomes that agree', () => {
    const game = newGame();
    const endings = { decided: 0, drawn: 0 };
    for (let seed = 0; seed < 200; seed++) {
      const steps = wholeGame(game, seed, () => game.sampleRandomAction());
      expect(steps).toHaveLength(10);
      for (const step of steps) expect(step.info.metrics.action_is_valid).toBe(true);
      for (const step of steps.slice(0, -1)) expect(step.rewards).toEqual([0, 0]);
      const last = steps.at(-1)!;
      expect(last.rewards[0]! + last.rewards[1]!).toBe(0);
      expect(last.reward).toBe(last.rewards[last.seat]!);
      expect(last.outcome).toEqual(last.rewards.map((reward) => (reward > 0 ? 'win' : reward < 0 ? 'loss' : 'draw')));
      endings[last.rewards[0] === 0 ? 'drawn' : 'decided']++;
    }
    expect(endings.decided).toBeGreaterThan(120);
    expect(endings.drawn).toBeGreaterThan(10);
  });

  test('a seed fixes the deal, the prompts and the random moves; another seed deals otherwise', () => {
    const replay = (seed: number) => {
      const game = newGame();
      const reset = game.reset(seed);
      const moves = wholeGame(game, seed, () => game.sampleRandomAction()).map((step) => step.info.action);
      return { instructions: reset.instructions, observation: reset.observation, moves };
    };
    expect(replay(11)).toEqual(replay(11));
    expect(replay(11).instructions).not.toEqual(replay(12).instructions);
    const rendered = (seed: number) => {
      const game = newGame();
      game.reset(seed);
      return game.render('text');
    };
    expect(rendered(11)).toBe(rendered(11));
    expect(rendered(11)).not.toBe(rendered(12));
  });

  test("the compact style: a short instruction, and each turn the seat's goods at its own prices, its gain, the offer and the open moves", () => {
    const game = newGame({ prompt_style: 'compact' });
    const reset = game.reset(SEED);
    expect(reset.instructions).toEqual([
      'You are P0; 10 turns. Goods are count@your price; the larger gain wins. [Offer: 2 Wheat -> 1 Ore] gives 2 Wheat for 1 Ore.',
      'You are P1; 10 turns. Goods are count@your price; the larger gain wins. [Offer: 2 Wheat -> 1 Ore] gives 2 Wheat for 1 Ore.',
    ]);
    expect(reset.observation).toBe('Turn 1/10. Wheat 15@6 Wood 14@8 Sheep 20@13 Brick 20@27 Ore 8@39, gain 0. Open: [Offer: ...] [Deny]');
    expect(game.step('[Offer: 5 Wheat -> 1 Ore]').observation).toBe(
      'Turn 2/10. Wheat 5@6 Wood 18@9 Sheep 23@13 Brick 18@25 Ore 24@40, gain 0. P0 offers 5 Wheat for 1 Ore. Open: [Accept] [Deny] [Offer: ...]',
    );
    expect(game.step('[Accept]').observation).toBe('Turn 3/10. Wheat 10@6 Wood 14@8 Sheep 20@13 Brick 20@27 Ore 9@39, gain +9. Open: [Offer: ...] [Deny]');
    expect(game.step('[Offer: 1 Ore]').observation).toBe(
      'Invalid: Player 0 made a trade offer in an incorrect format.\nTurn 3/10. Wheat 10@6 Wood 14@8 Sheep 20@13 Brick 20@27 Ore 9@39, gain +9. Open: [Offer: ...] [Deny]',
    );
    expect(game.step('[Deny]').observation).toBe('Turn 4/10. Wheat 10@6 Wood 18@9 Sheep 23@13 Brick 18@25 Ore 23@40, gain -10. Open: [Offer: ...] [Deny]');
  });

  test('the compact style takes about 155 tokens a turn with the built-in tokenizer (the instruction 68, the turn 72 to 107)', () => {
    const tokenizer = defaultTokenizer();
    const game = newGame({ prompt_style: 'compact' });
    const counts: number[] = [];
    for (let seed = 0; seed < 20; seed++) {
      const reset = game.reset(seed);
      let [observation, seat] = [reset.observation, reset.seat];
      for (;;) {
        counts.push(tokenizer.encode(`${reset.instructions[seat]}\n${observation}`).length);
        const step = game.step(seed % 2 === 0 ? game.sampleRandomAction() : game.opponentAction('greedy'));
        if (step.terminated) break;
        [observation, seat] = [step.observation, step.seat];
      }
    }
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(135);
    expect(Math.max(...counts)).toBeLessThanOrEqual(180);
  });

  test("render: both seats (goods, values, value and gain), the offer and the turn as text; a picture of both seats' goods", () => {
    const game = newGame();
    game.reset(SEED);
    game.step('[Offer: 5 Wheat -> 1 Ore]');
    expect(game.render('text')).toBe(
      [
        'Turn 2 of 10, P1 to move',
        '            Wheat   Wood  Sheep  Brick    Ore   value (gain)',
        'P0 has         15     14     20     20      8   1314 (0)',
        'P0 values       6      8     13     27     39',
        'P1 has          5     18     23     18     24   1901 (0)',
        'P1 values       6      9     13     25     40',
        'Offer: P0 gives 5 Wheat for 1 Ore; P1 to answer',
      ].join('\n'),
    );
    const offered = game.render('rgb') as RgbFrame;
    expect([offered.width, offered.height]).toEqual([230, 170]);
    expect(offered.data.length).toBe(230 * 170 * 3);
    game.step('[Accept]');
    expect(String(game.render('text')).split('\n')[2]).toBe('P0 has         10     14     20     20      9   1323 (+9)');
    const traded = game.render('rgb') as RgbFrame;
    expect(Buffer.from(traded.data).equals(Buffer.from(offered.data))).toBe(false);
    // each seat's panel shows its own goods: swapping them changes the picture
    const deal = dealOf(SEED);
    const table = { resources: deal.resources, values: deal.values, gains: [0, 0], offer: null, status: '' };
    const swapped = { ...table, resources: [deal.resources[1], deal.resources[0]] as const };
    expect(Buffer.from(negotiationPicture(table, 0).data).equals(Buffer.from(negotiationPicture(swapped, 0).data))).toBe(false);
  });
});

describe('simple_negotiation opponents', () => {
  test('greedy accepts an offer that raises its own value and that it can pay, and nothing else', () => {
    const values = inventory(6, 8, 13, 27, 39);
    const goods = inventory(15, 14, 20, 20, 8);
    expect(greedyAccepts({ from: 1, give: { Ore: 1 }, get: { Wheat: 6 } }, goods, values)).toBe(true);
    expect(greedyAccepts({ from: 1, give: { Ore: 1 }, get: { Wheat: 7 } }, goods, values)).toBe(false);
    expect(greedyAccepts({ from: 1, give: { Ore: 1 }, get: { Wheat: 6 } }, inventory(5, 14, 20, 20, 8), values)).toBe(false);
    // no gain is no reason to trade
    expect(greedyAccepts({ from: 1, give: { Wood: 1 }, get: { Wood: 1 } }, goods, values)).toBe(false);
  });

  test('greedy offers raise its own value and, among those, give the other the most at the base values, then itself the most', () => {
    for (let seed = 0; seed < 50; seed++) {
      const deal = dealOf(seed);
      const all = gainfulOffers(0, deal.resources[0], deal.values[0]);
      const chosen = greedyOffers(0, deal.resources[0], deal.values[0]);
      expect(chosen.length).toBeGreaterThan(0);
      const forOther = (offer: Offer) => tradeGain(offer, 1, BASE_VALUES);
      for (const offer of chosen) {
        expect(tradeGain(offer, 0, deal.values[0])).toBeGreaterThan(0);
        expect(holds(deal.resources[0], offer.give)).toBe(true);
        for (const other of all) expect(forOther(other)).toBeLessThanOrEqual(forOther(offer));
      }
    }
    // it holds nothing: no offer
    expect(greedyOffers(0, inventory(0, 0, 0, 0, 0), inventory(6, 8, 13, 27, 39))).toEqual([]);
  });

  test('the env plays greedy in both seats with valid moves: it accepts, or denies and counters; another name is refused', () => {
    const game = newGame();
    game.reset(SEED);
    const opening = game.opponentAction('greedy');
    expect(readReply(opening).offer).not.toBeNull();
    game.step('[Offer: 1 Ore -> 1 Wheat]');
    // P1 values Ore at 40 and Wheat at 6: a gift to it
    expect(game.opponentAction('greedy')).toBe('[Accept]');
    game.reset(SEED);
    game.step('[Offer: 1 Wheat -> 1 Ore]');
    expect(game.opponentAction('greedy')).toStartWith('[Deny] [Offer: ');
    const games = new Set<string>();
    for (let seed = 0; seed < 10; seed++) {
      const steps = wholeGame(game, seed, () => game.opponentAction('greedy'));
      for (const step of steps) expect(step.info.metrics.action_is_valid).toBe(true);
      games.add(steps.map((step) => step.info.action).join(' '));
    }
    expect(games.size).toBeGreaterThan(5);
    expect(() => game.opponentAction('minimax')).toThrow("simple_negotiation has no opponent 'minimax'");
  });

  test('greedy beats the random player in most games, in either seat', () => {
    const game = newGame();
    const results = { win: 0, draw: 0, loss: 0 };
    for (let seed = 0; seed < 100; seed++) {
      const greedySeat = seed % 2;
      const last = wholeGame(game, seed, (seat) => (seat === greedySeat ? game.opponentAction('greedy') : game.sampleRandomAction())).at(-1)!;
      results[last.outcome![greedySeat]!]++;
    }
    expect(results.win).toBeGreaterThan(60);
    expect(results.loss).toBeLessThan(35);
  });

  test('random moves are valid and varied: deny, accept what the seat can pay, and offers of goods it holds', () => {
    const game = newGame();
    const kinds = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      for (const step of wholeGame(game, seed, () => game.sampleRandomAction())) {
        expect(step.info.metrics.action_is_valid).toBe(true);
        kinds.add(String(step.info.action).replace(/\[Offer: .*\]/, '[Offer]'));
      }
    }
    expect([...kinds].sort()).toEqual(['[Accept]', '[Deny]', '[Deny] [Offer]', '[Offer]']);
  });
});

describe('simple_negotiation in agentic', () => {
  test("TextArena's id SimpleNegotiation-v0 names it", async () => {
    expect((await new PluginHost().resolveEnv('SimpleNegotiation-v0')).name).toBe('simple_negotiation');
  });

  test('agentic plugins check passes every check, the seated ones included, and skips none, in both prompt styles', async () => {
    for (const settings of [{}, { prompt_style: 'compact' }, { prompt_style: 'compact', max_turns: 6 }]) {
      const report = await checkEnv(simpleNegotiationPlugin, settings, { context, episodes: 8, maxSteps: 12 });
      const failed = report.checks.filter((check) => check.status === 'fail');
      const skipped = report.checks.filter((check) => check.status === 'skip');
      expect(failed).toEqual([]);
      expect(skipped).toEqual([]);
      expect(report.checks.map((check) => check.name)).toContain('bad_answer');
      expect(report.passed).toBe(true);
    }
  });
});
