/**
 * Statistics over the response tokens of a batch of rows, and over groups of per-row values.
 * Rows are host arrays aligned with their token ids; `masks[i][t]` is 1 on the tokens the policy
 * sampled. Variances are unbiased (n - 1), as torch's std and verl's masked_var are.
 */

export type Rows = readonly Float32Array[];
export type Masks = readonly Uint8Array[];

/** Mean of the masked entries of all rows (0 when none are masked). */
export function maskedMean(rows: Rows, masks: Masks): number {
  let sum = 0;
  let count = 0;
  rows.forEach((row, i) => {
    const mask = masks[i]!;
    for (let t = 0; t < row.length; t++) if (mask[t]) (sum += row[t]!), count++;
  });
  return count === 0 ? 0 : sum / count;
}

export function maskedCount(masks: Masks): number {
  let count = 0;
  for (const mask of masks) for (const m of mask) count += m;
  return count;
}

/** Unbiased variance of the masked entries; throws for fewer than two (callers check first). */
export function maskedVariance(rows: Rows, masks: Masks): number {
  const n = maskedCount(masks);
  if (n < 2) throw new Error(`masked variance of ${n} value(s)`);
  const mean = maskedMean(rows, masks);
  let squares = 0;
  rows.forEach((row, i) => {
    const mask = masks[i]!;
    for (let t = 0; t < row.length; t++) if (mask[t]) squares += (row[t]! - mean) ** 2;
  });
  return squares / (n - 1);
}

/**
 * (x - mean) / sqrt(var + 1e-8) over all masked tokens of the batch (token-weighted, like verl's
 * masked_whiten); unmasked entries are whitened too but carry no meaning. New rows.
 */
export function maskedWhiten(rows: Rows, masks: Masks): Float32Array[] {
  const mean = maskedMean(rows, masks);
  const scale = 1 / Math.sqrt(maskedVariance(rows, masks) + 1e-8);
  return rows.map((row) => row.map((x) => (x - mean) * scale));
}

/** Zeroes every unmasked entry, in place. */
export function applyMask(rows: Float32Array[], masks: Masks): Float32Array[] {
  rows.forEach((row, i) => row.forEach((_, t) => !masks[i]![t] && (row[t] = 0)));
  return rows;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  // exact for equal values: a sum divided back can be an ulp off (8 x -0.1 gives -0.1 + 1.4e-17),
  // which would leave a group that all scored alike a tiny advantage instead of none
  if (values.every((v) => v === values[0])) return values[0]!;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Unbiased standard deviation; NaN for fewer than two values (torch gives NaN too). */
export function std(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN;
  const m = mean(values);
  return Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / (values.length - 1));
}

/** Row indices by key, in first-seen order. */
export function groupIndices(keys: readonly string[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  keys.forEach((key, i) => {
    const members = groups.get(key);
    if (members) members.push(i);
    else groups.set(key, [i]);
  });
  return groups;
}

/** The last masked position of a row, or -1. */
export function lastMasked(mask: Uint8Array): number {
  return mask.lastIndexOf(1);
}

/** `<prefix>/mean`, `/max` and `/min` of some values (nothing for none). */
export function summaryStats(prefix: string, values: readonly number[]): Record<string, number> {
  if (values.length === 0) return {};
  let max = -Infinity;
  let min = Infinity;
  for (const v of values) (max = Math.max(max, v)), (min = Math.min(min, v));
  return { [`${prefix}/mean`]: mean(values), [`${prefix}/max`]: max, [`${prefix}/min`]: min };
}
