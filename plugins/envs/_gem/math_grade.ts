/**
 * Grading a math answer the way GEM's math_grader does, without its symbolic stage: an answer is
 * right when, after Hendrycks' MATH normalisation (mathd: \dfrac -> \frac, units, \left, "x =",
 * a/b -> \frac{a}{b}, spaces), it equals the reference; or when, after GEM's second
 * normalisation (\text{}, $, %, units, braces, case), the two agree element by element (tuples and
 * intervals split at commas): unreduced fractions must match as written, an integer reference
 * needs an integer answer, and otherwise the two must evaluate to the same number with our
 * calculator (exact for integers and fractions, 6 significant digits for decimals). Where GEM asks
 * sympy whether two expressions simplify to the same thing (x+1 vs 1+x, \sqrt{8} vs 2\sqrt{2}),
 * this says no; answers that are numbers, fractions, tuples of them or the reference's own text
 * grade as GEM grades them.
 */
import { evaluate } from '../../tools/calculator/expression';
import { lastBoxedContent } from './boxed';

/** Whether `given` (an extracted answer) matches the reference `reference`, or one of a list. */
export function mathAnswerCorrect(given: string, reference: unknown): boolean {
  const references = Array.isArray(reference) ? reference : [reference];
  return references.some((ref) => {
    const text = String(ref);
    const truth = text.includes('\\boxed') ? lastBoxedContent(text) : text;
    return truth !== null && (mathdNormalize(given) === mathdNormalize(truth) || elementsAgree(given, truth));
  });
}

// Units MathQA answers carry, dropped as whole words (GEM's list, singular; plurals follow)
const UNIT_WORDS = [
  'east',
  'degree',
  'mph',
  'kmph',
  'ft',
  'm sqaure',
  ' m east',
  'sq m',
  'deg',
  'mile',
  'q .',
  'monkey',
  'prime',
  'ratio',
  'profit of rs',
  'rd',
  'o',
  'gm',
  'p . m',
  'lb',
  'tile',
  'per',
  'dm',
  'lt',
  'gain',
  'ab',
  'way',
  'west',
  'a .',
  'b .',
  'c .',
  'd .',
  'e .',
  'f .',
  'g .',
  'h .',
  't',
  'a',
  'h',
  'no change',
  'men',
  'soldier',
  'pie',
  'bc',
  'excess',
  'st',
  'inches',
  'noon',
  'percent',
  'by',
  'gal',
  'kmh',
  'c',
  'acre',
  'rise',
  'a . m',
  'th',
  'π r 2',
  'sq',
  'mark',
  'l',
  'toy',
  'coin',
  'sq . m',
  'gallon',
  '° f',
  'profit',
  'minw',
  'yr',
  'women',
  'feet',
  'am',
  'pm',
  'hr',
  'cu cm',
  'square',
  'v â € ™',
  'are',
  'rupee',
  'rounds',
  'cubic',
  'cc',
  'mtr',
  's',
  'ohm',
  'number',
  'kmph',
  'day',
  'hour',
  'minute',
  'min',
  'second',
  'man',
  'woman',
  'sec',
  'cube',
  'mt',
  'sq inch',
  'mp',
  '∏ cm ³',
  'hectare',
  'more',
  'sec',
  'unit',
  'cu . m',
  'cm 2',
  'rs .',
  'rs',
  'kg',
  'g',
  'month',
  'km',
  'm',
  'cm',
  'mm',
  'apple',
  'liter',
  'loss',
  'yard',
  'pure',
  'year',
  'increase',
  'decrease',
  'd',
  'less',
  'Surface',
  'litre',
  'pi sq m',
  's .',
  'metre',
  'meter',
  'inch',
];
// As in GEM, a unit is a pattern ('q .' matches 'q' and any character); Python's \W is Unicode-aware, so the boundary is too
const UNIT_PATTERNS = [...UNIT_WORDS, ...UNIT_WORDS.map((unit) => `${unit}s`)].map(
  (unit) => new RegExp(`(^|[^\\p{L}\\p{N}_])${unit}(?=$|[^\\p{L}\\p{N}_])`, 'gu'),
);

/** Hendrycks' MATH normalisation (GEM's mathd_normalize_answer / _strip_string), in our words. */
function mathdNormalize(answer: string): string {
  let s = answer.trim();
  const text = /^\\text\{(.+?)\}$/.exec(s);
  if (text) s = text[1]!.trim();
  s = s.replaceAll('\n', '').replaceAll('\\!', '').replaceAll('\\\\', '\\');
  s = s
    .replace(/\\begin\{array\}\{.*?\}/g, '\\begin{pmatrix}')
    .replace(/\\end\{array\}/g, '\\end{pmatrix}')
    .replaceAll('bmatrix', 'pmatrix');
  s = s.replaceAll('tfrac', 'frac').replaceAll('dfrac', 'frac').replaceAll('\\neq', '\\ne').replaceAll('\\leq', '\\le').replaceAll('\\geq', '\\ge');
  s = s.replaceAll('\\left', '').replaceAll('\\right', '');
  const unitless = s.replace(/\\text\{.*?\}$/, '').trim();
  if (unitless !== '') s = unitless;
  for (let pass = 0; pass < 2; pass++) {
    for (const pattern of UNIT_PATTERNS) {
      const next = s.replace(pattern, '$1');
      if (next !== '') s = next;
    }
  }
  s = s.replaceAll('^{\\circ}', '').replaceAll('^\\circ', '').replaceAll('\\$', '');
  if (s.includes('\\text{ ')) s = s.split('\\text{ ')[0]!;
  s = s.replaceAll('\\%', '').replaceAll('%', '');
  s = s.replaceAll(' .', ' 0.').replaceAll('{.', '{0.');
  if (s === '') return s;
  if (s.startsWith('.')) s = `0${s}`;
  const sides = s.split('=');
  if (sides.length === 2 && sides[0]!.length <= 2) s = sides[1]!;
  s = s.replace(/\\sqrt([^{])/g, '\\sqrt{$1}').replaceAll(' ', '');
  s = s.replace(/\\frac([^{])([^{])/g, '\\frac{$1}{$2}').replace(/\\frac([^{])\{/g, '\\frac{$1}{');
  if (s === '0.5') return '\\frac{1}{2}';
  const slash = /^(-?\d+)\/(\d+)$/.exec(s);
  return slash ? `\\frac{${slash[1]}}{${slash[2]}}` : s;
}

const SPOKEN_UNITS = [
  'degree',
  'cm',
  'centimeter',
  'meter',
  'mile',
  'second',
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'year',
  'foot',
  'feet',
  'inch',
  'yard',
];

/** GEM's second normalisation (_normalize), with LaTeX fractions and roots spelled for the calculator. */
function normalize(expr: string): string {
  let s = expr;
  const text = /^\\text\{(.+?)\}$/.exec(s);
  if (text) s = text[1]!;
  s = s.replaceAll('\\%', '%').replaceAll('\\$', '$').replaceAll('$', '').replaceAll('%', '').replaceAll(' or ', ' , ').replaceAll(' and ', ' , ');
  s = s.replaceAll('million', '*10^6').replaceAll('billion', '*10^9').replaceAll('trillion', '*10^12');
  for (const unit of SPOKEN_UNITS) s = s.replace(new RegExp(`${unit}(es)?(s)? *(\\^[0-9]+)?`, 'g'), '');
  s = s.replace(/\^ *\\circ/g, '');
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  s = s.replace(/,\\! */g, '');
  if (isNumber(s) && isWhole(Number(s))) s = String(Math.round(Number(s)));
  s = s
    .replace(/\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}/g, (_, n: string, d: string) => (/^\d+$/.test(n) && /^\d+$/.test(d) ? `${n}/${d}` : `(${n})/(${d})`))
    .replace(/\\sqrt\{([^{}]*)\}/g, 'sqrt($1)');
  s = s.replaceAll('\\cdot', '*').replaceAll('\\times', '*').replaceAll('\\pi', 'pi').replaceAll('\\', '');
  s = s
    .replace(/- */g, '-')
    .replace(/([0-9]) +([0-9])/g, '$1+$2')
    .replaceAll(' ', '')
    .replaceAll('{', '')
    .replaceAll('}', '')
    .toLowerCase();
  const plain = stripThousands(s);
  return isNumber(plain) && isWhole(Number(plain)) ? String(Math.trunc(Number(plain))) : s;
}

function elementsAgree(given: string, truth: string): boolean {
  const [g, t] = [normalize(given), normalize(truth)];
  if (g === t) return true;
  if (g === '') return false;
  const [truthElements, givenElements] = [splitTuple(t), splitTuple(g)];
  if (truthElements.length > 1 && (t[0] !== g[0] || t.at(-1) !== g.at(-1))) return false;
  if (truthElements.length !== givenElements.length) return false;
  return truthElements.every((truthElement, i) => {
    const givenElement = givenElements[i]!;
    if (isFraction(truthElement) && isFraction(givenElement)) return truthElement === givenElement;
    if (isIntegerText(truthElement) !== isIntegerText(givenElement)) return false;
    return sameValue(truthElement, givenElement);
  });
}

function splitTuple(expr: string): string[] {
  const s = stripThousands(expr);
  if (s === '') return [];
  const inner = s.slice(1, -1);
  const bracketed = s.length > 2 && '()[]'.includes(s[0]!) && '()[]'.includes(s.at(-1)!) && ![...'()[]'].some((c) => inner.includes(c));
  return bracketed ? inner.split(',').map((e) => e.trim()) : [s];
}

/** Both evaluate, and to the same number (within a relative 1e-9, where sympy's difference simplifies to 0). */
function sameValue(a: string, b: string): boolean {
  const [x, y] = [valueOf(a), valueOf(b)];
  return x !== null && y !== null && Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
}

function valueOf(expr: string): number | null {
  try {
    const [n, d = '1'] = evaluate(expr.replaceAll('^', '**')).split('/');
    const value = Number(n) / Number(d);
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

const stripThousands = (s: string) => s.replace(/(\d),(\d\d\d)(?=$|\D)/g, '$1$2').replace(/(\d),(\d\d\d)(?=$|\D)/g, '$1$2');
const isNumber = (s: string) => s.trim() !== '' && Number.isFinite(Number(s));
const isWhole = (x: number) => Math.abs(x - Math.round(x)) <= 1e-7;
const isIntegerText = (s: string) => isNumber(stripThousands(s)) && isWhole(Number(stripThousands(s)));
const isFraction = (s: string) => /^-?[0-9]+.?\/0*[1-9][0-9]*.?$/.test(s);
