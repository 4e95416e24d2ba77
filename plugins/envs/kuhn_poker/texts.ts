/**
 * The words of TextArena's KuhnPoker-v0 (game.ts names the source): each player's instruction, the
 * game's messages, and how a reply is read as an action.
 */
import { type Action, ANTE, type Card, type Hand, handWinner, pot } from './game';

/** TextArena's prompt of player `seat` in a game of `rounds` hands. */
export function seatInstruction(seat: number, rounds: number): string {
  return [
    `You are Player ${seat} in a ${rounds} round game of Kuhn Poker.`,
    'Game Rules:',
    '- Kuhn Poker uses a 3-card deck with J, Q, K (J lowest, K highest)',
    `- Each player antes ${ANTE} chip and receives 1 card each round (note that the cards are dealt without replacement, so you cannot have the same card as your opponent).`,
    `- Game continues for ${rounds} rounds`,
    '- The player with the most chips after all rounds wins',
    '',
    'Action Rules:',
    "- '[check]': Pass without betting (only if no bet is on the table)",
    "- '[bet]': Add 1 chip to the pot (only if no bet is on the table)",
    "- '[call]': Match an opponent's bet by adding 1 chip to the pot",
    "- '[fold]': Surrender your hand and let your opponent win the pot",
  ].join('\n');
}

/**
 * The compact style's instruction of player `seat` (prompt_style: compact): the game and the seat;
 * the open actions come with each decision. It names no card, nor the game ("Kuhn" begins with the
 * K token): the seat's card is then the only J, Q or K in a compact prompt, so a small policy can
 * tell its card by the token alone rather than by where it stands.
 */
export function compactInstruction(seat: number, rounds: number): string {
  const hands = rounds === 1 ? '' : `, ${rounds} hands`;
  return `One-card poker, three cards${hands}. You are P${seat}.`;
}

/**
 * The warm start's notes on a decision (WarmStartHooks.stateNotes): the card of the seat to act and
 * where it ranks, `J low`, `Q mid`, `K high`; a reading of the hand, never the move to make.
 */
export function cardNotes(card: Card): string {
  return `${card} ${{ J: 'low', Q: 'mid', K: 'high' }[card]}`;
}

/** What each player is told when a hand is dealt: the round and its own card. */
export function roundOpening(round: number, rounds: number, card: Card): string {
  return `### Starting round ${round} out of ${rounds} rounds. Your card is: '${card}'`;
}

export function availableActions(actions: readonly Action[]): string {
  return `Your available actions are: ${actions.map((action) => `'[${action}]'`).join(', ')}`;
}

export function moveMessage(seat: number, action: Action): string {
  return `Player ${seat}, submitted move: '[${action}]'.`;
}

function scores(chips: readonly number[]): string {
  return `Current scores: Player 0: '${chips[0]}'; Player 1: '${chips[1]}'`;
}

/** How a finished hand ended (a fold, or the showdown naming both cards), with the chips after it. */
export function handEndMessage(hand: Hand, chips: readonly number[]): string {
  const winner = handWinner(hand);
  const loser = 1 - winner;
  if (hand.history.at(-1) === 'fold') return `Player ${loser} has folded. ${scores(chips)}`;
  const showdown = `Showdown: Player ${winner}'s ${hand.cards[winner]} beats Player ${loser}'s ${hand.cards[loser]}.`;
  return `${showdown} Player ${winner} wins pot of ${pot(hand)} chips. ${scores(chips)}`;
}

/** TextArena's verdict after the last round: the most chips wins, equal chips draw. */
export function gameEndMessage(chips: readonly number[], rounds: number): string {
  if (chips[0] === chips[1]) return `At the end of ${rounds} rounds, both players had the same number of chips.`;
  const winner = chips[0]! > chips[1]! ? 0 : 1;
  return `Player ${winner} won by having more chips at the end of all ${rounds} rounds.`;
}

/** The end of a game that player `seat` forfeited by answering badly once too often. */
export function forfeitMessage(seat: number, chips: readonly number[]): string {
  return `Player ${seat} forfeits the game; Player ${1 - seat} has won. ${scores(chips)}`;
}

/** Why a reply names no action at all. */
export const UNREADABLE_REASON = 'Action must be [Check], [Bet], [Call], or [Fold].';

/** Why a reply names an action that is not open now. */
export function closedActionReason(open: readonly Action[]): string {
  return `Action must be ${open.map((action) => `[${action}]`).join(', ')}.`;
}

/** TextArena's action regex: one of the four words in square brackets, in any case. */
const ACTION_PATTERN = /\[(check|bet|call|fold)\]/i;

/**
 * The action a reply names, or null where it names none. As KuhnPoker-v0 reads it: a reply with
 * neither '[' nor ']' is first wrapped in brackets (its ActionFormattingWrapper, so a bare "bet" is
 * [bet]), then the FIRST of the four words in brackets counts (Python's re.search), whether or not
 * it is open now. Surrounding whitespace is dropped before the wrapping, so "bet\n" reads as [bet]
 * (TextArena would wrap it as "[bet\n]" and find nothing).
 */
export function parseAction(response: string): Action | null {
  const reply = response.trim();
  const text = reply.includes('[') || reply.includes(']') ? reply : `[${reply}]`;
  const word = ACTION_PATTERN.exec(text)?.[1];
  return word === undefined ? null : (word.toLowerCase() as Action);
}
