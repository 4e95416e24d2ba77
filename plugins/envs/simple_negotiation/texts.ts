/**
 * The words of TextArena's SimpleNegotiation-v0 (game.ts names the source): each player's
 * instruction, the game's messages, how a reply is read, and the compact style's few words.
 */
import { type Bundle, bundleText, type Inventory, type Offer, RESOURCES, type Resource } from './game';

/** A gain as the texts show it: "+9", "0", "-10". */
export function signed(gain: number): string {
  return gain > 0 ? `+${gain}` : String(gain);
}

/** TextArena's list of a player's goods: one line a resource, its quantity and the player's value. */
export function inventoryLines(resources: Inventory, values: Inventory): string {
  const lines = RESOURCES.map((resource) => `${`[${resource}]`.padEnd(8)}  Qty: ${String(resources[resource]).padEnd(2)}   Value: ${values[resource]}`);
  return `The resources and associated values you currently have are:\n\t+ ${lines.join('\n\t+ ')}`;
}

/**
 * TextArena's prompt of player `seat` in a game of `maxTurns` turns, with one line of ours: a turn
 * must use a token (TextArena takes talk alone as a turn that makes no offer; here it is an
 * unreadable answer, and '[Deny]' is that turn written out).
 */
export function seatInstruction(seat: number, resources: Inventory, values: Inventory, maxTurns: number): string {
  return [
    `You are Player ${seat} in the Negotiation Game.`,
    'You have some resources, and your task is to trade such that the total value of your resources increases.',
    inventoryLines(resources, values),
    'At each turn, you can talk to your opponent and make a trade offer.',
    'Use the following special tokens for actions:',
    "  - '[Offer: 3 Sheep, 2 Ore -> 5 Brick, 2 Sheep]': [Offer: Offered Resources -> Requested Resources]",
    "  - '[Accept]': To accept an incoming offer.",
    "  - '[Deny]': To deny an incoming offer (default).",
    "Every turn must use at least one of these tokens; '[Deny]' alone makes no trade.",
    `The game lasts for ${maxTurns} turns in total.`,
  ].join('\n');
}

/** The compact style's instruction of player `seat`: the seat, the turns, how goods are shown and how to offer; its goods come with each turn. */
export function compactInstruction(seat: number, maxTurns: number): string {
  return `You are P${seat}; ${maxTurns} turns. Goods are count@your price; the larger gain wins. [Offer: 2 Wheat -> 1 Ore] gives 2 Wheat for 1 Ore.`;
}

/** The compact style's turn: the turn, the seat's goods at its prices, its gain so far, the offer it may answer, and what it may do. */
export function compactView(turn: number, maxTurns: number, resources: Inventory, values: Inventory, gain: number, offer: Offer | null): string {
  const goods = RESOURCES.map((resource) => `${resource} ${resources[resource]}@${values[resource]}`).join(' ');
  const offered = offer ? ` P${offer.from} offers ${bundleText(offer.give)} for ${bundleText(offer.get)}.` : '';
  const open = offer ? '[Accept] [Deny] [Offer: ...]' : '[Offer: ...] [Deny]';
  return `Turn ${turn}/${maxTurns}. ${goods}, gain ${signed(gain)}.${offered} Open: ${open}`;
}

export function offerMessage(offer: Offer): string {
  return `Player ${offer.from} made the following offer to Player ${1 - offer.from}: Offered items: ${bundleText(offer.give)} -> Requested items: ${bundleText(offer.get)}`;
}

export function acceptedMessage(offer: Offer): string {
  return `Player ${1 - offer.from} accepted the trade offer from Player ${offer.from}.`;
}

export function rejectedMessage(seat: number): string {
  return `Player ${seat} rejected the trade offer.`;
}

export function noOfferMessage(seat: number): string {
  return `Player ${seat} made no new trade offer.`;
}

/** TextArena's verdict when the turns run out: the larger gain wins, equal gains draw. */
export function gameEndMessage(gains: readonly number[]): string {
  if (gains[0] === gains[1]) return 'Same change in inventory value for all players. Draw.';
  const winner = gains[0]! > gains[1]! ? 0 : 1;
  return `Player ${winner} won by having a larger gain in inventory value.`;
}

/** The gains of both players, said after the verdict (not TextArena's words: it tells no numbers). */
export function gainsMessage(gains: readonly number[]): string {
  return `Inventory value changes: ${gains.map((gain, seat) => `Player ${seat} ${signed(gain)}`).join(', ')}.`;
}

/** Why a reply is not a move (TextArena's reasons, the first ours). */
export const REASONS = {
  noAction: (seat: number) => `Player ${seat} used none of the tokens '[Offer: ...]', '[Accept]' and '[Deny]'.`,
  malformedOffer: (seat: number) => `Player ${seat} made a trade offer in an incorrect format.`,
  offerBeyondMeans: (seat: number) => `Player ${seat} tried to make a trade offer without having the necessary resources.`,
  acceptBeyondMeans: () => 'Player tried accepting a trade without having the necessary resources.',
};

/** What a reply says: whether it accepts or denies, and its offer (null: none; 'malformed': one TextArena cannot read). */
export interface Reply {
  readonly accept: boolean;
  readonly deny: boolean;
  readonly offer: Pick<Offer, 'give' | 'get'> | 'malformed' | null;
}

const ACCEPT_PATTERN = /\[Accept\]/i;
const DENY_PATTERN = /\[Deny\]/i;
/** TextArena's offer pattern: "[Offer: ... -> ...]", the colon and a leading "I give" or "I offer" optional, trailing dots dropped. */
const OFFER_PATTERN = /\[Offer:?\s*(?:I\s+(?:give|offer)\s+)?([^[\]]+?)\s*\.*\]/is;
const QUANTITY_PATTERN = /(\d+)\s+([A-Za-z]+)/g;

/**
 * The resource a word names, or null: TextArena title-cases it ("sheep" is Sheep) and takes
 * "Sheeps" and "Woods" for their resources; here a plural "s" is dropped from every name
 * ("2 Bricks" is 2 Brick, which TextArena refuses as an incorrect format).
 */
function resourceNamed(word: string): Resource | null {
  const name = word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
  const known = (candidate: string) => (RESOURCES as readonly string[]).includes(candidate);
  if (known(name)) return name as Resource;
  return name.endsWith('s') && known(name.slice(0, -1)) ? (name.slice(0, -1) as Resource) : null;
}

/** The goods one side of an offer names ("3 Sheep, 2 Ore"), a resource named twice summed; null when it names none or a count is 0 or a name unknown. */
function parseBundle(text: string): Bundle | null {
  const bundle: Partial<Record<Resource, number>> = {};
  const matches = [...text.matchAll(QUANTITY_PATTERN)];
  if (matches.length === 0) return null;
  for (const [, count, word] of matches) {
    const resource = resourceNamed(word!);
    const units = Number(count);
    if (resource === null || units <= 0) return null;
    bundle[resource] = (bundle[resource] ?? 0) + units;
  }
  return bundle;
}

/** An offer's text between "[Offer:" and "]": what is given, "->", what is asked; null when TextArena cannot read it. */
function parseOffer(body: string): Pick<Offer, 'give' | 'get'> | null {
  const text = body
    .trim()
    .split(/\s+/)
    .join(' ')
    .replace(/[.,!?]+$/, '')
    .replace(/^I\s+(?:give|offer)\s+/i, '');
  const sides = text.split(/\s*->\s*/);
  if (sides.length !== 2) return null;
  const give = parseBundle(sides[0]!);
  const get = parseBundle(sides[1]!);
  return give && get ? { give, get } : null;
}

/**
 * What a reply says, as SimpleNegotiation-v0 reads it: a reply with neither '[' nor ']' is first
 * wrapped in brackets (its ActionFormattingWrapper, so a bare "Accept" is [Accept]); [Accept] and
 * [Deny] count anywhere in it, in any case; the FIRST "[Offer: ...]" is the offer. Surrounding
 * whitespace is dropped before the wrapping, so "Deny\n" reads as [Deny].
 */
export function readReply(response: string): Reply {
  const reply = response.trim();
  const text = reply.includes('[') || reply.includes(']') ? reply : `[${reply}]`;
  const body = OFFER_PATTERN.exec(text)?.[1];
  const offer = body === undefined ? null : (parseOffer(body) ?? 'malformed');
  return { accept: ACCEPT_PATTERN.test(text), deny: DENY_PATTERN.test(text), offer };
}
