/**
 * The `greedy` opponent: a simple rule, NOT an optimal player. It accepts an offer that raises its
 * own inventory value (by its own values) and that it can pay; otherwise it offers a trade that
 * raises its value: up to 5 units of one resource it holds for up to 5 units of another. Of those
 * it offers the one the other is likeliest to take, priced at the base values (the other's values
 * are private, but lie within 20% of them): the most for the other at base values, then the most
 * for itself, the seeded stream breaking what ties remain.
 *
 * It never asks what the other gains from a trade it accepts, though the game is won by the larger
 * gain, and it never haggles: it repeats its offer until it is taken, so a player who learns its
 * prices beats it. No way of playing this game best is known (each player's values are private,
 * and what a trade is worth to the other is a guess), so the env offers no solution hook.
 */
import { BASE_VALUES, holds, type Inventory, type Offer, RESOURCES, tradeGain } from './game';

/** The most units of one resource the greedy player gives or asks in one offer. */
const MOST_UNITS_TRADED = 5;

/** Every offer of `seat` of up to 5 units of one resource it holds for up to 5 units of another that raises its own value. */
export function gainfulOffers(seat: number, resources: Inventory, values: Inventory): Offer[] {
  const offers: Offer[] = [];
  for (const given of RESOURCES) {
    for (const asked of RESOURCES.filter((resource) => resource !== given)) {
      for (let give = 1; give <= Math.min(MOST_UNITS_TRADED, resources[given]); give++) {
        for (let get = 1; get <= MOST_UNITS_TRADED; get++) {
          const offer: Offer = { from: seat, give: { [given]: give }, get: { [asked]: get } };
          if (tradeGain(offer, seat, values) > 0) offers.push(offer);
        }
      }
    }
  }
  return offers;
}

/** The greedy player's choice among its gainful offers: the most for the other at base values, then the most for itself; none when no trade gains. */
export function greedyOffers(seat: number, resources: Inventory, values: Inventory): Offer[] {
  const offers = gainfulOffers(seat, resources, values);
  const otherAtBase = (offer: Offer) => tradeGain(offer, 1 - seat, BASE_VALUES);
  const bestForOther = Math.max(...offers.map(otherAtBase));
  const likeliest = offers.filter((offer) => otherAtBase(offer) === bestForOther);
  const bestForSelf = Math.max(...likeliest.map((offer) => tradeGain(offer, seat, values)));
  return likeliest.filter((offer) => tradeGain(offer, seat, values) === bestForSelf);
}

/** Whether the greedy player takes `offer`: it can pay what is asked and gains by its own values. */
export function greedyAccepts(offer: Offer, resources: Inventory, values: Inventory): boolean {
  const seat = 1 - offer.from;
  return holds(resources, offer.get) && tradeGain(offer, seat, values) > 0;
}
