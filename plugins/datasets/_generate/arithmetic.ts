/**
 * Generates the arithmetic word-problem dataset: `bun plugins/datasets/_generate/arithmetic.ts` writes
 * plugins/datasets/arithmetic/{train,val}.jsonl. Rows are {question, answer, expression}; the
 * answer is a plain number string, the expression a worked solution for the calculator (see
 * ArithmeticRow). Each problem takes two or three steps (shopping, ages, rates, sharing); most
 * answers are whole numbers, money problems sometimes have cents. Money is computed in whole cents
 * so no answer carries a float rounding error. The same code gives the same files on
 * every machine, and val shares no question with train.
 */
import { join } from 'node:path';
import { Rng } from '../../../src/engine/rng';

export interface ArithmeticRow {
  question: string;
  answer: string;
  /**
   * A worked solution: one calculator expression, written from the question's own numbers (in the
   * order the question gives them where the arithmetic allows), whose value (as the calculator
   * prints it) is the answer. The warm start's worked examples
   * (warm_start.worked_examples) call the calculator with it; the policy never sees it.
   */
  expression: string;
}

export const SPLIT_SIZES = { train: 2000, val: 200 } as const;
const SEED = 20240611;

const NAMES = [
  'Ava',
  'Ben',
  'Cara',
  'Dev',
  'Eli',
  'Fay',
  'Gus',
  'Hana',
  'Ivan',
  'Jo',
  'Kai',
  'Lena',
  'Mia',
  'Noah',
  'Omar',
  'Pia',
  'Raj',
  'Sara',
  'Tom',
  'Uma',
  'Vic',
  'Wen',
  'Yara',
  'Zoe',
];
const ITEMS = ['apple', 'pen', 'ticket', 'notebook', 'mug', 'candle', 'sticker', 'comic', 'plant', 'scarf'];

/** A dollar amount from whole cents: $12, $12.50. */
function dollars(cents: number): string {
  return cents % 100 === 0 ? `$${cents / 100}` : `$${(cents / 100).toFixed(2)}`;
}

/** A dollar amount from whole cents as a plain number, for an expression: 12, 12.50. */
function amount(cents: number): string {
  return dollars(cents).slice(1);
}

/** An answer from whole cents, as a plain number: 12, 12.5, 12.05. */
function centsAnswer(cents: number): string {
  return String(Number((cents / 100).toFixed(2)));
}

/** A price in cents: whole dollars most of the time, sometimes with quarters. */
function price(rng: Rng, low: number, high: number): number {
  const whole = rng.intBetween(low, high) * 100;
  return rng.bernoulli(0.7) ? whole : whole + rng.choice([25, 50, 75]);
}

function twoNames(rng: Rng): [string, string] {
  const [a, b] = rng.shuffle([...NAMES]);
  return [a!, b!];
}

type Template = (rng: Rng) => ArithmeticRow;

const TEMPLATES: Template[] = [
  function change(rng) {
    const [a] = twoNames(rng);
    const n = rng.intBetween(2, 6);
    const each = price(rng, 1, 9);
    const bill = Math.ceil((n * each + 1) / 1000) * 1000 + rng.choice([0, 1000]);
    return {
      question: `${a} buys ${n} ${rng.choice(ITEMS)}s at ${dollars(each)} each and pays with ${dollars(bill)}. How much change, in dollars?`,
      answer: centsAnswer(bill - n * each),
      expression: `${amount(bill)}-${n}*${amount(each)}`,
    };
  },
  function twoItems(rng) {
    const [a] = twoNames(rng);
    const [n1, p1, n2, p2] = [rng.intBetween(2, 9), price(rng, 1, 6), rng.intBetween(2, 9), price(rng, 2, 12)];
    return {
      question: `${a} buys ${n1} pens at ${dollars(p1)} each and ${n2} books at ${dollars(p2)} each. How many dollars in all?`,
      answer: centsAnswer(n1 * p1 + n2 * p2),
      expression: `${n1}*${amount(p1)}+${n2}*${amount(p2)}`,
    };
  },
  function discount(rng) {
    const [a] = twoNames(rng);
    const full = rng.intBetween(2, 12) * 1000;
    const off = rng.choice([10, 20, 25, 30, 40, 50]);
    const n = rng.intBetween(2, 4);
    // 1-0.25 rather than (100-25)/100: a decimal makes the calculator print 67.5, not 135/2
    return {
      question: `A jacket costs ${dollars(full)} and is ${off}% off. ${a} buys ${n}. How many dollars does ${a} pay?`,
      answer: centsAnswer((n * full * (100 - off)) / 100),
      expression: `${amount(full)}*(1-0.${off})*${n}`,
    };
  },
  function ageTimes(rng) {
    const [a, b] = twoNames(rng);
    const [age, k, later] = [rng.intBetween(3, 15), rng.intBetween(2, 4), rng.intBetween(2, 20)];
    return {
      question: `${a} is ${age}. ${b} is ${k} times as old as ${a}. How old will ${b} be in ${later} years?`,
      answer: String(k * age + later),
      expression: `${age}*${k}+${later}`,
    };
  },
  function ageSum(rng) {
    const [a, b] = twoNames(rng);
    const [younger, gap] = [rng.intBetween(4, 40), rng.intBetween(1, 12)];
    return {
      question: `${a} is ${gap} years older than ${b}. Their ages add up to ${2 * younger + gap}. How old is ${a}?`,
      answer: String(younger + gap),
      expression: `(${gap}+${2 * younger + gap})/2`,
    };
  },
  function agePast(rng) {
    const [a, b] = twoNames(rng);
    const ago = rng.intBetween(2, 9);
    const younger = rng.intBetween(ago + 1, 30);
    return {
      question: `${a} is twice as old as ${b}. In ${ago} years ${a} will be ${2 * younger + ago}. How old was ${b} ${ago} years ago?`,
      answer: String(younger - ago),
      expression: `(${2 * younger + ago}-${ago})/2-${ago}`,
    };
  },
  function distance(rng) {
    const [v, t, w, u] = [rng.intBetween(4, 12) * 10, rng.intBetween(1, 5), rng.intBetween(4, 12) * 10, rng.intBetween(1, 4)];
    return {
      question: `A train goes ${v} km/h for ${t} hours, then ${w} km/h for ${u} hours. How many km does it go?`,
      answer: String(v * t + w * u),
      expression: `${v}*${t}+${w}*${u}`,
    };
  },
  function wage(rng) {
    const [a] = twoNames(rng);
    const [rate, hours, days] = [price(rng, 8, 25), rng.intBetween(3, 8), rng.intBetween(2, 6)];
    return {
      question: `${a} earns ${dollars(rate)} an hour and works ${hours} hours a day for ${days} days. How many dollars is that?`,
      answer: centsAnswer(rate * hours * days),
      expression: `${amount(rate)}*${hours}*${days}`,
    };
  },
  function tank(rng) {
    const [perMinute, minutes, start] = [rng.intBetween(2, 15), rng.intBetween(3, 30), rng.intBetween(0, 9) * 10];
    return {
      question: `A tank holds ${start + perMinute * minutes} liters and has ${start} in it. A pipe adds ${perMinute} liters a minute. How many minutes to fill it?`,
      answer: String(minutes),
      expression: `(${start + perMinute * minutes}-${start})/${perMinute}`,
    };
  },
  function savings(rng) {
    const [a] = twoNames(rng);
    const [start, weekly, weeks] = [rng.intBetween(0, 50) * 2, rng.intBetween(3, 20), rng.intBetween(2, 15)];
    return {
      question: `${a} has $${start} and saves $${weekly} a week. After how many weeks will ${a} have $${start + weekly * weeks}?`,
      answer: String(weeks),
      expression: `(${start + weekly * weeks}-${start})/${weekly}`,
    };
  },
  function sharing(rng) {
    const [a, b] = twoNames(rng);
    const [friends, each, given] = [rng.intBetween(2, 6), rng.intBetween(3, 12), rng.intBetween(2, 15)];
    return {
      question: `${a} has ${friends * each + given} marbles, gives ${given} to ${b}, and splits the rest among ${friends} friends. How many does each get?`,
      answer: String(each),
      expression: `(${friends * each + given}-${given})/${friends}`,
    };
  },
  function recipe(rng) {
    const [cups, batch, times] = [rng.intBetween(1, 4), rng.choice([6, 8, 10, 12]), rng.choice([0.5, 1.5, 2, 3, 4])];
    // 3.0 rather than 3: a decimal makes the calculator print 4.5, not 9/2
    return {
      question: `A recipe uses ${cups} cups of flour for ${batch} cookies. How many cups for ${batch * times} cookies?`,
      answer: String(cups * times),
      expression: `${cups}.0/${batch}*${batch * times}`,
    };
  },
  function average(rng) {
    const [a] = twoNames(rng);
    const scores = [rng.intBetween(60, 100), rng.intBetween(60, 100), rng.intBetween(60, 100)];
    const fourth = rng.intBetween(60, 100);
    const total = scores.reduce((x, y) => x + y, 0) + fourth;
    const target = total / 4;
    if (!Number.isInteger(target)) return average(rng);
    return {
      question: `${a} scored ${scores.join(', ')} on three tests. What fourth score makes the average ${target}?`,
      answer: String(fourth),
      expression: `${target}*4-${scores.join('-')}`,
    };
  },
  function packs(rng) {
    const [a] = twoNames(rng);
    const [size, needed] = [rng.intBetween(4, 12), rng.intBetween(10, 90)];
    return {
      question: `Pencils come in packs of ${size}. ${a} needs ${needed} pencils. How many packs must ${a} buy?`,
      answer: String(Math.ceil(needed / size)),
      expression: `ceil(${needed}/${size})`,
    };
  },
];

/** Rows for each split, in file order. */
export function generateArithmetic(): Record<keyof typeof SPLIT_SIZES, ArithmeticRow[]> {
  const seen = new Set<string>();
  const split = (name: keyof typeof SPLIT_SIZES) => {
    const rng = Rng.fromSeed(SEED, 'arithmetic', name);
    const rows: ArithmeticRow[] = [];
    while (rows.length < SPLIT_SIZES[name]) {
      const row = rng.choice(TEMPLATES)(rng);
      if (seen.has(row.question)) continue;
      seen.add(row.question);
      rows.push(row);
    }
    return rows;
  };
  return { train: split('train'), val: split('val') };
}

export function toJsonl(rows: readonly ArithmeticRow[]): string {
  return rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
}

if (import.meta.main) {
  const folder = join(import.meta.dir, '../arithmetic');
  for (const [name, rows] of Object.entries(generateArithmetic())) {
    await Bun.write(join(folder, `${name}.jsonl`), toJsonl(rows));
    console.log(`wrote plugins/datasets/arithmetic/${name}.jsonl (${rows.length} rows)`);
  }
}
