/**
 * Writes small Python function tasks with assert-based tests (plugins/datasets/coding/{train,val}.jsonl).
 * Each task family has parameters drawn from the seeded Rng, a reference solution, and test inputs;
 * the expected values are computed by running the reference solution once in the sandbox, and a
 * few hand-checked asserts per family guard the solutions themselves. Rows are
 * {question, tests: [assert, ...], solution, entry_point}. Run: bun plugins/datasets/_generate/coding.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Rng } from '../../../src/engine/rng';
import { runPython } from '../../../src/sandbox/python';

const SEED = 7310;
const OUT = resolve(import.meta.dir, '../coding');
const rng = Rng.fromSeed(SEED, 'coding');

interface Task {
  entry: string;
  question: string;
  solution: string;
  /** Argument lists as Python source, e.g. "[1, 2], 3". */
  inputs: string[];
  /** Asserts checked by hand (they also hold for the solution). */
  checks: string[];
}

const py = (value: unknown) => JSON.stringify(value);
const ints = (n: number, lo: number, hi: number) => Array.from({ length: n }, () => rng.intBetween(lo, hi));
const WORDS = ['apple', 'river', 'stone', 'level', 'kayak', 'orange', 'noon', 'tiger', 'lamp', 'radar', 'cloud', 'moon', 'Anna', 'civic', 'bread'];
const sentence = (n: number) => Array.from({ length: n }, () => rng.choice(WORDS)).join(' ');

const FAMILIES: Array<() => Task> = [
  () => {
    const [a, b] = rng.choice([
      [3, 5],
      [2, 7],
      [4, 6],
      [3, 7],
      [5, 8],
    ])!;
    return {
      entry: 'sum_multiples',
      question: `Write a Python function \`sum_multiples(n)\` that returns the sum of all positive integers below n that are multiples of ${a} or ${b}.`,
      solution: `def sum_multiples(n):\n    return sum(i for i in range(1, n) if i % ${a} == 0 or i % ${b} == 0)\n`,
      inputs: ['1', String(a + 1), ...ints(3, 10, 500).map(String)],
      checks: [`assert sum_multiples(${a}) == 0`, `assert sum_multiples(${a + 1}) == ${a}`],
    };
  },
  () => ({
    entry: 'count_vowels',
    question: 'Write a Python function `count_vowels(s)` that returns how many vowels (a, e, i, o, u, in either case) the string s contains.',
    solution: 'def count_vowels(s):\n    return sum(1 for c in s.lower() if c in "aeiou")\n',
    inputs: [py(''), py('xyz'), py(sentence(3)), py(sentence(5).toUpperCase())],
    checks: ['assert count_vowels("Education") == 5'],
  }),
  () => ({
    entry: 'reverse_words',
    question: 'Write a Python function `reverse_words(s)` that returns the words of s in reverse order, joined by single spaces.',
    solution: 'def reverse_words(s):\n    return " ".join(reversed(s.split()))\n',
    inputs: [py('one'), py(sentence(4)), py(`  ${sentence(3)}  `)],
    checks: ['assert reverse_words("a b  c") == "c b a"'],
  }),
  () => {
    const [a, b] = rng.choice([
      [3, 5],
      [2, 3],
      [4, 7],
      [3, 4],
    ])!;
    const [wa, wb] = rng.choice([
      ['Fizz', 'Buzz'],
      ['Foo', 'Bar'],
      ['Ping', 'Pong'],
    ])!;
    return {
      entry: 'fizz_buzz',
      question: `Write a Python function \`fizz_buzz(n)\` that returns a list of strings for 1..n: "${wa}${wb}" for multiples of both ${a} and ${b}, "${wa}" for multiples of ${a}, "${wb}" for multiples of ${b}, and the number itself as a string otherwise.`,
      solution: `def fizz_buzz(n):\n    out = []\n    for i in range(1, n + 1):\n        word = ("${wa}" if i % ${a} == 0 else "") + ("${wb}" if i % ${b} == 0 else "")\n        out.append(word or str(i))\n    return out\n`,
      inputs: ['1', String(a * b), String(rng.intBetween(a * b + 1, 40))],
      checks: [`assert fizz_buzz(${a})[-1] == "${wa}"`, `assert fizz_buzz(0) == []`],
    };
  },
  () => ({
    entry: 'is_palindrome',
    question:
      'Write a Python function `is_palindrome(s)` that returns True if s reads the same forwards and backwards when only letters and digits are kept and case is ignored, else False.',
    solution: 'def is_palindrome(s):\n    kept = [c.lower() for c in s if c.isalnum()]\n    return kept == kept[::-1]\n',
    inputs: [py(rng.choice(WORDS)), py(rng.choice(WORDS)), py('Was it a car or a cat I saw?'), py('ab')],
    checks: ['assert is_palindrome("A man, a plan, a canal: Panama") is True', 'assert is_palindrome("abc") is False'],
  }),
  () => {
    const m = rng.choice([10, 97, 1000, 1_000_007]);
    return {
      entry: 'fib_mod',
      question: `Write a Python function \`fib_mod(n)\` that returns the n-th Fibonacci number modulo ${m}, where fib(0) = 0 and fib(1) = 1. It must be fast for n up to 100000.`,
      solution: `def fib_mod(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, (a + b) % ${m}\n    return a\n`,
      inputs: ['0', '1', '10', String(rng.intBetween(50, 500)), '100000'],
      checks: [`assert fib_mod(10) == ${55 % m}`],
    };
  },
  () => ({
    entry: 'gcd_list',
    question: 'Write a Python function `gcd_list(numbers)` that returns the greatest common divisor of a non-empty list of positive integers.',
    solution: 'def gcd_list(numbers):\n    from math import gcd\n    result = 0\n    for x in numbers:\n        result = gcd(result, x)\n    return result\n',
    inputs: [py([rng.intBetween(2, 50)]), py(ints(3, 1, 9).map((x) => x * 12)), py(ints(4, 1, 30).map((x) => x * 7)), py([17, 19])],
    checks: ['assert gcd_list([12, 18, 24]) == 6'],
  }),
  () => ({
    entry: 'run_length',
    question:
      'Write a Python function `run_length(s)` that run-length encodes s: each run of a repeated character becomes the character followed by the run length, e.g. "aaab" -> "a3b1".',
    solution:
      'def run_length(s):\n    out = []\n    i = 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n            j += 1\n        out.append(s[i] + str(j - i))\n        i = j\n    return "".join(out)\n',
    inputs: [py(''), py('a'), py(Array.from({ length: 4 }, () => rng.choice(['a', 'b', 'c']).repeat(rng.intBetween(1, 5))).join(''))],
    checks: ['assert run_length("aaab") == "a3b1"', 'assert run_length("abba") == "a1b2a1"'],
  }),
  () => {
    const k = rng.intBetween(1, 25);
    return {
      entry: 'caesar',
      question: `Write a Python function \`caesar(s)\` that shifts every letter of s forward by ${k} places in the alphabet, wrapping around from z to a and keeping case; other characters stay as they are.`,
      solution: `def caesar(s):\n    out = []\n    for c in s:\n        if c.isalpha() and c.isascii():\n            base = ord("a") if c.islower() else ord("A")\n            out.append(chr((ord(c) - base + ${k}) % 26 + base))\n        else:\n            out.append(c)\n    return "".join(out)\n`,
      inputs: [py(''), py('xyz'), py(`${sentence(3)}, ${rng.choice(WORDS).toUpperCase()}!`)],
      checks: [`assert caesar("a") == "${String.fromCharCode(97 + k)}"`],
    };
  },
  () => ({
    entry: 'second_largest',
    question:
      'Write a Python function `second_largest(numbers)` that returns the second largest distinct value in a list of integers, or None if there is none.',
    solution: 'def second_largest(numbers):\n    distinct = sorted(set(numbers))\n    return distinct[-2] if len(distinct) >= 2 else None\n',
    inputs: [py([5]), py([3, 3, 3]), py(ints(6, -20, 20)), py(ints(8, 0, 9))],
    checks: ['assert second_largest([4, 1, 4, 3]) == 3', 'assert second_largest([]) is None'],
  }),
  () => ({
    entry: 'flatten',
    question: 'Write a Python function `flatten(items)` that turns a list that may contain nested lists (to any depth) into a flat list, keeping the order.',
    solution:
      'def flatten(items):\n    out = []\n    for item in items:\n        if isinstance(item, list):\n            out.extend(flatten(item))\n        else:\n            out.append(item)\n    return out\n',
    inputs: [py([]), py([1, [2, [3, [rng.intBetween(4, 9)]]], 5]), py([[ints(2, 0, 9)], ints(3, 0, 9)])],
    checks: ['assert flatten([1, [2, [3]], [], 4]) == [1, 2, 3, 4]'],
  }),
  () => ({
    entry: 'word_counts',
    question:
      'Write a Python function `word_counts(text)` that returns a dict mapping each lower-cased word (split on whitespace) to the number of times it occurs.',
    solution: 'def word_counts(text):\n    counts = {}\n    for w in text.lower().split():\n        counts[w] = counts.get(w, 0) + 1\n    return counts\n',
    inputs: [py(''), py(sentence(6)), py(`${sentence(3)} ${sentence(3).toUpperCase()}`)],
    checks: ['assert word_counts("a A b") == {"a": 2, "b": 1}'],
  }),
  () => ({
    entry: 'digital_root',
    question:
      'Write a Python function `digital_root(n)` that repeatedly sums the decimal digits of the non-negative integer n until a single digit remains, and returns it.',
    solution: 'def digital_root(n):\n    while n >= 10:\n        n = sum(int(d) for d in str(n))\n    return n\n',
    inputs: ['0', '7', String(rng.intBetween(10, 99)), String(rng.intBetween(1000, 999999))],
    checks: ['assert digital_root(9875) == 2'],
  }),
  () => ({
    entry: 'primes_below',
    question: 'Write a Python function `primes_below(n)` that returns the list of all prime numbers less than n, in increasing order.',
    solution:
      'def primes_below(n):\n    if n < 3:\n        return []\n    sieve = [True] * n\n    sieve[0] = sieve[1] = False\n    for i in range(2, int(n ** 0.5) + 1):\n        if sieve[i]:\n            sieve[i * i :: i] = [False] * len(sieve[i * i :: i])\n    return [i for i, is_prime in enumerate(sieve) if is_prime]\n',
    inputs: ['2', '3', String(rng.intBetween(20, 60)), String(rng.intBetween(100, 200))],
    checks: ['assert primes_below(10) == [2, 3, 5, 7]'],
  }),
  () => ({
    entry: 'transpose',
    question: 'Write a Python function `transpose(matrix)` that returns the transpose of a rectangular matrix given as a list of rows.',
    solution: 'def transpose(matrix):\n    return [list(row) for row in zip(*matrix)]\n',
    inputs: [py([[1]]), py([ints(3, 0, 9), ints(3, 0, 9)]), py([ints(2, -5, 5), ints(2, -5, 5), ints(2, -5, 5)])],
    checks: ['assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]'],
  }),
  () => ({
    entry: 'is_anagram',
    question:
      'Write a Python function `is_anagram(a, b)` that returns True if the strings a and b contain the same letters the same number of times, ignoring case and spaces.',
    solution: 'def is_anagram(a, b):\n    key = lambda s: sorted(s.replace(" ", "").lower())\n    return key(a) == key(b)\n',
    inputs: [
      `${py('Listen')}, ${py('Silent')}`,
      `${py(rng.choice(WORDS))}, ${py(rng.choice(WORDS))}`,
      `${py('Dormitory')}, ${py('dirty room')}`,
      `${py('abc')}, ${py('abd')}`,
    ],
    checks: ['assert is_anagram("Astronomer", "Moon starer") is True'],
  }),
  () => ({
    entry: 'balanced',
    question:
      'Write a Python function `balanced(s)` that returns True if every bracket in s ((), [], {}) is closed by a matching bracket in the right order, ignoring other characters.',
    solution:
      'def balanced(s):\n    pairs = {")": "(", "]": "[", "}": "{"}\n    stack = []\n    for c in s:\n        if c in "([{":\n            stack.append(c)\n        elif c in pairs:\n            if not stack or stack.pop() != pairs[c]:\n                return False\n    return not stack\n',
    inputs: [py(''), py('([]{x})'), py('(]'), py(rng.choice(['((())', '{[()()]}', ')(', 'a[b{c}d]e']))],
    checks: ['assert balanced("{[()]}") is True', 'assert balanced("([)]") is False'],
  }),
  () => ({
    entry: 'roman_to_int',
    question:
      'Write a Python function `roman_to_int(s)` that converts a Roman numeral (I, V, X, L, C, D, M, with subtractive pairs like IV and CM) to an integer.',
    solution:
      'def roman_to_int(s):\n    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}\n    total = 0\n    for i, c in enumerate(s):\n        v = values[c]\n        if i + 1 < len(s) and values[s[i + 1]] > v:\n            total -= v\n        else:\n            total += v\n    return total\n',
    inputs: [py('III'), py(rng.choice(['XLII', 'XCIX', 'CDXLIV', 'MMXXIV'])), py(rng.choice(['MCMXC', 'DCCCLXXXVIII', 'LXXIII']))],
    checks: ['assert roman_to_int("MCMXCIV") == 1994', 'assert roman_to_int("IV") == 4'],
  }),
  () => ({
    entry: 'merge_sorted',
    question:
      'Write a Python function `merge_sorted(a, b)` that merges two lists sorted in increasing order into one sorted list (without calling sort or sorted).',
    solution:
      'def merge_sorted(a, b):\n    out, i, j = [], 0, 0\n    while i < len(a) and j < len(b):\n        if a[i] <= b[j]:\n            out.append(a[i]); i += 1\n        else:\n            out.append(b[j]); j += 1\n    return out + a[i:] + b[j:]\n',
    inputs: [`[], ${py([1, 2])}`, `${py(ints(4, 0, 20).sort((x, y) => x - y))}, ${py(ints(3, 0, 20).sort((x, y) => x - y))}`],
    checks: ['assert merge_sorted([1, 4], [2, 3, 5]) == [1, 2, 3, 4, 5]'],
  }),
  () => {
    const k = rng.intBetween(2, 4);
    return {
      entry: 'chunks',
      question: `Write a Python function \`chunks(items)\` that splits a list into consecutive pieces of ${k} elements (the last piece may be shorter) and returns the list of pieces.`,
      solution: `def chunks(items):\n    return [items[i : i + ${k}] for i in range(0, len(items), ${k})]\n`,
      inputs: [py([]), py(ints(k, 0, 9)), py(ints(k * 2 + 1, 0, 9))],
      checks: [`assert chunks(list(range(${k + 1}))) == [list(range(${k})), [${k}]]`],
    };
  },
  () => ({
    entry: 'rotate',
    question:
      'Write a Python function `rotate(items, k)` that returns the list rotated right by k places (k may be larger than the length; an empty list stays empty).',
    solution: 'def rotate(items, k):\n    if not items:\n        return []\n    k %= len(items)\n    return items[-k:] + items[:-k] if k else list(items)\n',
    inputs: [`[], 3`, `${py(ints(5, 0, 9))}, ${rng.intBetween(1, 4)}`, `${py(ints(4, 0, 9))}, ${rng.intBetween(5, 12)}`],
    checks: ['assert rotate([1, 2, 3], 1) == [3, 1, 2]'],
  }),
  () => ({
    entry: 'unique_in_order',
    question: 'Write a Python function `unique_in_order(items)` that returns the list of distinct values of items in the order they first appear.',
    solution:
      'def unique_in_order(items):\n    seen = set()\n    out = []\n    for x in items:\n        if x not in seen:\n            seen.add(x)\n            out.append(x)\n    return out\n',
    inputs: [py([]), py(ints(10, 0, 5)), py(sentence(6).split(' '))],
    checks: ['assert unique_in_order([3, 1, 3, 2, 1]) == [3, 1, 2]'],
  }),
  () => ({
    entry: 'max_subarray',
    question: 'Write a Python function `max_subarray(numbers)` that returns the largest sum of a non-empty contiguous slice of a non-empty list of integers.',
    solution:
      'def max_subarray(numbers):\n    best = current = numbers[0]\n    for x in numbers[1:]:\n        current = max(x, current + x)\n        best = max(best, current)\n    return best\n',
    inputs: [py([-3]), py(ints(8, -10, 10)), py(ints(12, -6, 8))],
    checks: ['assert max_subarray([-2, 1, -3, 4, -1, 2, 1, -5, 4]) == 6'],
  }),
  () => ({
    entry: 'collatz_steps',
    question:
      'Write a Python function `collatz_steps(n)` that returns how many steps the Collatz rule (halve n if even, else 3n + 1) takes to bring the positive integer n to 1.',
    solution:
      'def collatz_steps(n):\n    steps = 0\n    while n != 1:\n        n = n // 2 if n % 2 == 0 else 3 * n + 1\n        steps += 1\n    return steps\n',
    inputs: ['1', String(rng.intBetween(2, 30)), String(rng.intBetween(100, 1000))],
    checks: ['assert collatz_steps(6) == 8'],
  }),
  () => ({
    entry: 'is_leap_year',
    question:
      'Write a Python function `is_leap_year(year)` that returns True for Gregorian leap years (divisible by 4, except centuries not divisible by 400), else False.',
    solution: 'def is_leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n',
    inputs: ['1900', '2000', String(rng.intBetween(1600, 2400)), String(rng.intBetween(1, 400) * 4)],
    checks: ['assert is_leap_year(2024) is True', 'assert is_leap_year(2100) is False'],
  }),
];

const tasks: Task[] = [];
for (let round = 0; round < 4; round++) for (const family of FAMILIES) tasks.push(family());

/** The expected value of each input, from running the reference solution. */
async function expectations(task: Task): Promise<string[]> {
  const program = `${task.solution}\n${task.checks.join('\n')}\nfor args in [${task.inputs.map((a) => `(${a},)`).join(', ')}]:\n    print(repr(${task.entry}(*args)))\n`;
  const run = await runPython(program, { timeoutMs: 20_000 });
  if (run.reason !== 'ok') throw new Error(`${task.entry}: the reference solution failed: ${run.stderr}`);
  return run.stdout.trimEnd().split('\n');
}

const rows: object[] = [];
const seen = new Set<string>();
for (const task of tasks) {
  const expected = await expectations(task);
  const tests = [...task.checks, ...task.inputs.map((args, i) => `assert ${task.entry}(${args}) == ${expected[i]}`)];
  const key = task.question + tests.join();
  if (seen.has(key)) continue;
  seen.add(key);
  rows.push({ question: task.question, tests, solution: task.solution, entry_point: task.entry });
}
// split by question, so a task asked with other test inputs never sits on both sides
const byQuestion = new Map<string, object[]>();
for (const row of rows) {
  const question = (row as { question: string }).question;
  byQuestion.set(question, [...(byQuestion.get(question) ?? []), row]);
}
const groups = rng.shuffle([...byQuestion.values()]);
const val: object[] = [];
const train: object[] = [];
for (const group of groups) (val.length < rows.length / 5 ? val : train).push(...group);
const jsonl = (list: object[]) => list.map((row) => JSON.stringify(row)).join('\n') + '\n';
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'val.jsonl'), jsonl(val));
writeFileSync(join(OUT, 'train.jsonl'), jsonl(train));
console.log(`${rows.length} coding tasks: ${train.length} train, ${val.length} val`);
