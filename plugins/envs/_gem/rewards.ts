/** GEM's LanguageGameReward: the rewards its language games give (gem/utils/constants.py). */
export const LanguageGameReward = {
  /** The task is done. */
  success: 1,
  /** A step that does not end the game (a hint, a valid move). */
  internalStep: 0,
  /** The game is lost (a mine hit). */
  fail: 0,
  /** A well-formed action the rules refuse (a move off the board). */
  invalidAction: 0,
  /** A response with no action in the expected form; it ends the episode. */
  formatError: -0.1,
} as const;
