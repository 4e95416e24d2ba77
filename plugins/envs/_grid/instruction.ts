/** The instruction of a grid game: what to do, what each symbol means, and how to answer. */
export function gridInstruction(task: string, symbols: Readonly<Record<string, string>>, actions: readonly string[], example: string): string {
  return [
    task,
    `Symbols: ${Object.entries(symbols)
      .map(([symbol, meaning]) => `${symbol} = ${meaning}`)
      .join(', ')}.`,
    `Actions: ${actions.join(', ')}. Give exactly one action per turn inside answer tags, for example <answer>${example}</answer>.`,
  ].join('\n');
}
