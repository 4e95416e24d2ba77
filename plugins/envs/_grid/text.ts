/** A grid world's state as text: one character per cell, one line per row. */
export function gridText(rows: number, cols: number, symbolAt: (cell: number) => string): string {
  const lines: string[] = [];
  for (let row = 0; row < rows; row++) {
    let line = '';
    for (let col = 0; col < cols; col++) line += symbolAt(row * cols + col);
    lines.push(line);
  }
  return lines.join('\n');
}
