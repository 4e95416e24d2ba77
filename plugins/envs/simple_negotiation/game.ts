/**
 * Simple Negotiation's goods, deals and trades, as TextArena's SimpleNegotiation-v0 plays them
 * (read at LeonGuertler/TextArena, textarena/envs/SimpleNegotiation/env.py, last changed on main in
 * commit a02af70b08482c319b2a7ce202b2b5f75851a9e0; main at 0ce46093cd84cc81b9c4b6cb03c24a2b296a0d76;
 * its registration, `max_turns=10`, from textarena/envs/__init__.py; turns and the error allowance
 * from textarena/state.py's TwoPlayerState).
 *
 * Each player holds 5 to 25 of each of five resources and values each resource privately, within
 * 20% of a base value (Wheat 5, Wood 10, Sheep 15, Brick 25, Ore 40; no value below 5 or above 40).
 * A trade moves the proposer's offered goods to the other player and the requested goods back. A
 * player's inventory value is its goods priced at its own values; the game compares each player's
 * gain over its starting value.
 *
 * Nothing here draws at random except `dealFrom`, whose stream comes from the caller.
 */
import type { Rng } from 'agentic';

/** The resources in TextArena's order. */
export const RESOURCES = ['Wheat', 'Wood', 'Sheep', 'Brick', 'Ore'] as const;
export type Resource = (typeof RESOURCES)[number];

/** A quantity (or a value) for every resource. */
export type Inventory = Readonly<Record<Resource, number>>;
/** Some of the resources with a positive quantity each, in the order they were named. */
export type Bundle = Readonly<Partial<Record<Resource, number>>>;

export const BASE_VALUES: Inventory = { Wheat: 5, Wood: 10, Sheep: 15, Brick: 25, Ore: 40 };
/** Each player starts with between these many of each resource, both included. */
const FEWEST_UNITS = 5;
const MOST_UNITS = 25;
/** A private value lies within this share of its base value, and within the bounds below. */
const VALUE_SPREAD = 0.2;
const LOWEST_VALUE = 5;
const HIGHEST_VALUE = 40;

/** The values a player may put on `resource`: the base value less or more 20% (rounded down), kept within 5 to 40. */
export function valueRange(resource: Resource): [low: number, high: number] {
  const base = BASE_VALUES[resource];
  const variation = Math.floor(VALUE_SPREAD * base);
  return [Math.max(base - variation, LOWEST_VALUE), Math.min(base + variation, HIGHEST_VALUE)];
}

/** What each player holds and how it values each resource, by seat. */
export interface Deal {
  readonly resources: readonly [Inventory, Inventory];
  readonly values: readonly [Inventory, Inventory];
}

function drawInventory(draw: (resource: Resource) => number): Inventory {
  return Object.fromEntries(RESOURCES.map((resource) => [resource, draw(resource)])) as Record<Resource, number>;
}

/** A deal drawn as TextArena draws one: both players' quantities first, then both players' values, each uniform over its range. */
export function dealFrom(rng: Rng): Deal {
  const quantities = () => drawInventory(() => rng.intBetween(FEWEST_UNITS, MOST_UNITS));
  const values = () => drawInventory((resource) => rng.intBetween(...valueRange(resource)));
  const resources = [quantities(), quantities()] as const;
  return { resources, values: [values(), values()] };
}

/** An offer of player `from` to the other: it gives `give` and asks `get` in return. */
export interface Offer {
  readonly from: number;
  readonly give: Bundle;
  readonly get: Bundle;
}

/** The bundle's resources with their quantities, in the order they were named. */
export function bundleEntries(bundle: Bundle): [Resource, number][] {
  return Object.entries(bundle) as [Resource, number][];
}

/** `inventory` priced at `values`. */
export function inventoryValue(inventory: Inventory, values: Inventory): number {
  return RESOURCES.reduce((sum, resource) => sum + inventory[resource] * values[resource], 0);
}

/** `bundle` priced at `values`. */
export function bundleValue(bundle: Bundle, values: Inventory): number {
  return bundleEntries(bundle).reduce((sum, [resource, units]) => sum + units * values[resource], 0);
}

/** Whether `inventory` holds at least every quantity of `bundle`. */
export function holds(inventory: Inventory, bundle: Bundle): boolean {
  return bundleEntries(bundle).every(([resource, units]) => inventory[resource] >= units);
}

/** `inventory` with `bundle` added (sign 1) or taken away (sign -1). */
function moved(inventory: Inventory, bundle: Bundle, sign: 1 | -1): Inventory {
  return drawInventory((resource) => inventory[resource] + sign * (bundle[resource] ?? 0));
}

/**
 * Both players' goods after `offer` is accepted: the proposer's offered goods go to the other and
 * the requested goods come back. Throws unless each side holds what it hands over.
 */
export function afterTrade(resources: readonly [Inventory, Inventory], offer: Offer): [Inventory, Inventory] {
  const proposer = resources[offer.from]!;
  const responder = resources[1 - offer.from]!;
  if (!holds(proposer, offer.give) || !holds(responder, offer.get)) throw new Error(`the trade ${offerText(offer)} needs goods a player lacks`);
  const traded = [moved(moved(proposer, offer.give, -1), offer.get, 1), moved(moved(responder, offer.get, -1), offer.give, 1)];
  return (offer.from === 0 ? traded : traded.reverse()) as [Inventory, Inventory];
}

/** What `seat` gains by its own values if `offer` is accepted (negative: it loses). */
export function tradeGain(offer: Offer, seat: number, values: Inventory): number {
  const [received, handed] = seat === offer.from ? [offer.get, offer.give] : [offer.give, offer.get];
  return bundleValue(received, values) - bundleValue(handed, values);
}

/** A bundle as an offer names it: "3 Sheep, 2 Ore". */
export function bundleText(bundle: Bundle): string {
  return bundleEntries(bundle)
    .map(([resource, units]) => `${units} ${resource}`)
    .join(', ');
}

/** An offer in the form a reply makes one: "[Offer: 3 Sheep, 2 Ore -> 5 Brick]". */
export function offerText(offer: Pick<Offer, 'give' | 'get'>): string {
  return `[Offer: ${bundleText(offer.give)} -> ${bundleText(offer.get)}]`;
}
