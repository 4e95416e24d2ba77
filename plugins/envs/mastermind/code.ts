/** Mastermind's arithmetic: the pegs a guess earns, and the codes that fit what the pegs said. */

export interface Pegs {
  /** Right digit in the right place. */
  black: number;
  /** Right digit in the wrong place (each digit of the code counted once). */
  white: number;
}

export interface ScoredGuess {
  guess: readonly number[];
  pegs: Pegs;
}

export interface CodeRules {
  codeLength: number;
  numNumbers: number;
  duplicates: boolean;
}

export function pegsFor(code: readonly number[], guess: readonly number[]): Pegs {
  const unmatchedCode: number[] = [];
  const unmatchedGuess: number[] = [];
  let black = 0;
  for (let i = 0; i < code.length; i++) {
    if (code[i] === guess[i]) black++;
    else {
      unmatchedCode.push(code[i]!);
      unmatchedGuess.push(guess[i]!);
    }
  }
  let white = 0;
  for (const digit of unmatchedGuess) {
    const at = unmatchedCode.indexOf(digit);
    if (at >= 0) {
      white++;
      unmatchedCode.splice(at, 1);
    }
  }
  return { black, white };
}

/** Every code the rules allow, in increasing order (1 2 3 4, 1 2 3 5, ...). */
export function* allCodes(rules: CodeRules, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === rules.codeLength) {
    yield [...prefix];
    return;
  }
  for (let digit = 1; digit <= rules.numNumbers; digit++) {
    if (!rules.duplicates && prefix.includes(digit)) continue;
    prefix.push(digit);
    yield* allCodes(rules, prefix);
    prefix.pop();
  }
}

/** Whether `code`, were it the secret, would have earned every guess the pegs it got. */
export function fits(code: readonly number[], history: readonly ScoredGuess[]): boolean {
  return history.every(({ guess, pegs }) => {
    const got = pegsFor(code, guess);
    return got.black === pegs.black && got.white === pegs.white;
  });
}

/** The codes that fit the history, in increasing order. */
export function* fittingCodes(rules: CodeRules, history: readonly ScoredGuess[]): Generator<number[]> {
  for (const code of allCodes(rules)) if (fits(code, history)) yield code;
}
