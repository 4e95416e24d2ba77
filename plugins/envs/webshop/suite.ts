/**
 * A goal as an evaluation suite lists it: `{id, asin, instruction, attributes, options,
 * price_upper}` in the keys reset's info.goal uses, so a suite names the product asked for and
 * everything the score compares the purchase with.
 */
import type { SuiteEpisode } from 'agentic';
import type { Goal, GoalOption } from './catalog';

export function goalEpisode(goal: Goal): SuiteEpisode {
  return {
    id: goal.id,
    asin: goal.asin,
    instruction: goal.instruction,
    attributes: [...goal.attributes],
    options: goal.options.map((o) => ({ ...o })),
    price_upper: goal.priceUpper,
  };
}

const isOption = (o: unknown): o is GoalOption =>
  typeof o === 'object' &&
  o !== null &&
  typeof (o as GoalOption).value === 'string' &&
  (typeof (o as GoalOption).type === 'string' || (o as GoalOption).type === null);

/** The goal of a suite entry (a held-out goal: split val); a malformed one throws a one-line error. */
export function goalOf(episode: SuiteEpisode): Goal {
  const { id, asin, instruction, attributes, options, price_upper } = episode;
  const ok =
    typeof id === 'string' &&
    typeof asin === 'string' &&
    typeof instruction === 'string' &&
    Array.isArray(attributes) &&
    attributes.every((a) => typeof a === 'string') &&
    Array.isArray(options) &&
    options.every(isOption) &&
    typeof price_upper === 'number';
  if (!ok)
    throw new Error(
      `webshop: cannot replay the episode ${JSON.stringify(episode).slice(0, 80)}: expected {id, asin, instruction, attributes: [string], options: [{type, value}], price_upper: number}`,
    );
  return { id, asin, instruction, attributes: [...attributes], options: options.map((o) => ({ ...o })), priceUpper: price_upper, split: 'val' };
}
