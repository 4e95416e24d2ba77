/** The rewards GEM's language games pay (LanguageGameReward in gem/utils/constants.py). */
export const LanguageGameReward = {
  /** The task is done (the code found, the board cleared). */
  success: 1,
  /** A step that does not end the game. */
  internalStep: 0,
  /** The game is lost (a mine hit). */
  fail: 0,
  /** An action the rules refuse (a cell outside the board, a repeated guess); the turn is used up. */
  invalidAction: 0,
  /** A response with no action in the game's \boxed{} form; it ends the episode. */
  formatError: -0.1,
} as const;
