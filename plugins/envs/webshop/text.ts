/**
 * Word-level text handling shared by search and scoring: both must agree on what counts as the
 * same word, or a product found by its words would not be credited for them.
 */

/** Words too common in shopping requests to tell products apart. */
const STOPWORDS = new Set(
  (
    'a an and are as at be but by for from has have i im in is it its looking me my need needs of on or ' +
    'please some that the this to want was which with would you your find get buy dollars price lower than'
  ).split(' '),
);

/** Lower-case words: runs of letters and digits (a decimal point stays inside a number; "i'm" is "im"). */
export function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/['’]/g, '')
      .match(/[a-z0-9]+(?:\.[0-9]+)?/g) ?? []
  );
}

/**
 * A crude singular form, so that "shoes" finds "shoe" and "extensions" credits "extension".
 * Only plural endings are touched; words of three letters or fewer stay as they are.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /[0-9]/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ss') || word.endsWith('us') || word.endsWith('is')) return word;
  if (/(?:ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

/** Stemmed words of a text, stopwords kept (phrases are matched word for word). */
export function terms(text: string): string[] {
  return words(text).map(stem);
}

/** Stemmed words without stopwords: what search ranks on and what titles are compared by. */
export function contentTerms(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w))
    .map(stem);
}

/** Whether two phrases have the same words, ignoring order, case, plurals and punctuation. */
export function samePhrase(a: string, b: string): boolean {
  const left = new Set(terms(a));
  const right = new Set(terms(b));
  return left.size > 0 && left.size === right.size && [...left].every((t) => right.has(t));
}

/** Whether `phrase` occurs, word after word, inside the word list `text`. */
export function containsPhrase(text: readonly string[], phrase: string): boolean {
  const needle = terms(phrase);
  if (needle.length === 0) return false;
  outer: for (let start = 0; start + needle.length <= text.length; start++) {
    for (let i = 0; i < needle.length; i++) if (text[start + i] !== needle[i]) continue outer;
    return true;
  }
  return false;
}

/** Collapses runs of white space and trims: the form button texts are compared in. */
export function squish(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `text` cut to at most `max` characters, marked with "..." when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 3)).trimEnd()}...`;
}

/** A price as the shop prints it. */
export function dollars(value: number): string {
  return `$${value.toFixed(2)}`;
}
