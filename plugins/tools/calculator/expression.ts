/**
 * A safe arithmetic evaluator: a hand-written parser over numbers, + - * / // % ^ ** !, parentheses,
 * a few functions and constants. Nothing is passed to eval. Integers and fractions stay exact
 * (BigInt rationals: 1/3 + 1/6 = 1/2); anything with a decimal point or an irrational function is
 * a float. Size limits keep hostile input (9^9^9, deep nesting) from hanging the process.
 */

export class CalcError extends Error {}

type Value = { kind: 'exact'; n: bigint; d: bigint } | { kind: 'float'; x: number };

const MAX_INPUT = 1000;
const MAX_DEPTH = 100;
const MAX_EXACT_BITS = 4096;

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function bitLength(x: bigint): number {
  return (x < 0n ? -x : x).toString(2).length;
}

function exact(n: bigint, d: bigint = 1n): Value {
  if (d === 0n) throw new CalcError('division by zero');
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d);
  if (g > 1n) [n, d] = [n / g, d / g];
  if (bitLength(n) > MAX_EXACT_BITS || bitLength(d) > MAX_EXACT_BITS) return float(Number(n) / Number(d));
  return { kind: 'exact', n, d };
}

function float(x: number): Value {
  if (Number.isNaN(x)) throw new CalcError('the result is not a number');
  if (!Number.isFinite(x)) throw new CalcError('the result is too large');
  return { kind: 'float', x };
}

function toNumber(v: Value): number {
  return v.kind === 'float' ? v.x : Number(v.n) / Number(v.d);
}

function isInteger(v: Value): v is { kind: 'exact'; n: bigint; d: bigint } {
  return v.kind === 'exact' && v.d === 1n;
}

function add(a: Value, b: Value): Value {
  if (a.kind === 'exact' && b.kind === 'exact') return exact(a.n * b.d + b.n * a.d, a.d * b.d);
  return float(toNumber(a) + toNumber(b));
}

function negate(a: Value): Value {
  return a.kind === 'exact' ? exact(-a.n, a.d) : float(-a.x);
}

function multiply(a: Value, b: Value): Value {
  if (a.kind === 'exact' && b.kind === 'exact') return exact(a.n * b.n, a.d * b.d);
  return float(toNumber(a) * toNumber(b));
}

function divide(a: Value, b: Value): Value {
  if (toNumber(b) === 0) throw new CalcError('division by zero');
  if (a.kind === 'exact' && b.kind === 'exact') return exact(a.n * b.d, a.d * b.n);
  return float(toNumber(a) / toNumber(b));
}

/** Python's floor division and modulo (the result of % has the sign of the divisor). */
function floorDivide(a: Value, b: Value): Value {
  const quotient = divide(a, b);
  return quotient.kind === 'exact' ? exact(floorExact(quotient)) : float(Math.floor(quotient.x));
}

function modulo(a: Value, b: Value): Value {
  return add(a, negate(multiply(b, floorDivide(a, b))));
}

function power(base: Value, exponent: Value): Value {
  if (isInteger(exponent) && base.kind === 'exact') {
    const e = exponent.n < 0n ? -exponent.n : exponent.n;
    const bits = Math.max(bitLength(base.n), bitLength(base.d));
    if (e === 0n) return exact(1n);
    // log2 of the result is at least e * (bits - 1): refuse to build numbers far beyond the limit
    if (bits <= 1 || Number(e) * (bits - 1) <= MAX_EXACT_BITS) {
      if (exponent.n < 0n && base.n === 0n) throw new CalcError('division by zero');
      const [n, d] = [base.n ** e, base.d ** e];
      return exponent.n < 0n ? exact(d, n) : exact(n, d);
    }
  }
  const x = Math.pow(toNumber(base), toNumber(exponent));
  if (Number.isNaN(x)) throw new CalcError('a negative number has no real root of that order');
  return float(x);
}

function factorial(v: Value): Value {
  if (!isInteger(v) || v.n < 0n) throw new CalcError('factorial needs a whole number >= 0');
  if (v.n > 1000n) throw new CalcError('factorial argument too large');
  let out = 1n;
  for (let i = 2n; i <= v.n; i++) out *= i;
  return exact(out);
}

type Fn = (args: Value[]) => Value;

function unary(name: string, f: (x: number) => number): Fn {
  return (args) => {
    if (args.length !== 1) throw new CalcError(`${name}() takes one argument`);
    return float(f(toNumber(args[0]!)));
  };
}

function exactOr(name: string, onExact: (v: { n: bigint; d: bigint }) => bigint, f: (x: number) => number): Fn {
  return (args) => {
    if (args.length !== 1) throw new CalcError(`${name}() takes one argument`);
    const v = args[0]!;
    return v.kind === 'exact' ? exact(onExact(v)) : float(f(v.x));
  };
}

/** floor(n / d) for d > 0 (BigInt division truncates toward zero). */
function floorExact({ n, d }: { n: bigint; d: bigint }): bigint {
  return n >= 0n ? n / d : -((-n + d - 1n) / d);
}

const FUNCTIONS: Record<string, Fn> = {
  sqrt: (args) => {
    if (args.length !== 1) throw new CalcError('sqrt() takes one argument');
    const v = args[0]!;
    if (toNumber(v) < 0) throw new CalcError('sqrt of a negative number');
    if (v.kind === 'exact') {
      const [rn, rd] = [bigSqrt(v.n), bigSqrt(v.d)];
      if (rn * rn === v.n && rd * rd === v.d) return exact(rn, rd);
    }
    return float(Math.sqrt(toNumber(v)));
  },
  abs: (args) => {
    if (args.length !== 1) throw new CalcError('abs() takes one argument');
    const v = args[0]!;
    return v.kind === 'exact' ? exact(v.n < 0n ? -v.n : v.n, v.d) : float(Math.abs(v.x));
  },
  floor: exactOr('floor', floorExact, Math.floor),
  ceil: exactOr('ceil', (v) => -floorExact({ n: -v.n, d: v.d }), Math.ceil),
  round: (args) => {
    if (args.length < 1 || args.length > 2) throw new CalcError('round() takes one or two arguments');
    const digits = args[1] ? Number(toNumber(args[1])) : 0;
    if (!Number.isInteger(digits) || Math.abs(digits) > 15) throw new CalcError('round(): digits must be a whole number up to 15');
    const scale = 10 ** digits;
    const x = toNumber(args[0]!);
    const rounded = (Math.sign(x) * Math.round(Math.abs(x) * scale)) / scale; // halves away from zero
    return digits <= 0 && args[0]!.kind === 'exact' ? exact(BigInt(Math.round(rounded))) : float(rounded);
  },
  min: (args) => pick(args, 'min', (a, b) => a < b),
  max: (args) => pick(args, 'max', (a, b) => a > b),
  exp: unary('exp', Math.exp),
  ln: unary('ln', Math.log),
  log: (args) => {
    if (args.length < 1 || args.length > 2) throw new CalcError('log() takes one or two arguments');
    const x = toNumber(args[0]!);
    if (x <= 0) throw new CalcError('log of a number <= 0');
    return float(args.length === 2 ? Math.log(x) / Math.log(toNumber(args[1]!)) : Math.log(x));
  },
  log10: unary('log10', Math.log10),
  log2: unary('log2', Math.log2),
  sin: unary('sin', Math.sin),
  cos: unary('cos', Math.cos),
  tan: unary('tan', Math.tan),
  asin: unary('asin', Math.asin),
  acos: unary('acos', Math.acos),
  atan: unary('atan', Math.atan),
  factorial: (args) => {
    if (args.length !== 1) throw new CalcError('factorial() takes one argument');
    return factorial(args[0]!);
  },
};

function pick(args: Value[], name: string, better: (a: number, b: number) => boolean): Value {
  if (args.length === 0) throw new CalcError(`${name}() needs at least one argument`);
  return args.reduce((best, v) => (better(toNumber(v), toNumber(best)) ? v : best));
}

function bigSqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

const CONSTANTS: Record<string, Value> = { pi: { kind: 'float', x: Math.PI }, e: { kind: 'float', x: Math.E } };

type Token = { type: 'num'; text: string } | { type: 'name'; text: string } | { type: 'op'; text: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const re = /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_]\w*)|(\*\*|\/\/|[-+*/%^!(),]))/y;
  let pos = 0;
  while (pos < source.length) {
    if (/^\s*$/.test(source.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(source);
    if (!m) throw new CalcError(`unexpected '${source.slice(pos).trim()[0]}'`);
    pos = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ type: 'num', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ type: 'name', text: m[2] });
    else tokens.push({ type: 'op', text: m[3]! });
  }
  return tokens;
}

/** Whole numbers are exact; a decimal point or an exponent makes a float, as in sympy. */
function parseNumber(text: string): Value {
  return /^\d+$/.test(text) ? exact(BigInt(text)) : float(Number(text));
}

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Value {
    if (this.tokens.length === 0) throw new CalcError('empty expression');
    const value = this.expression();
    if (this.i < this.tokens.length) throw new CalcError(`unexpected '${this.tokens[this.i]!.text}'`);
    return value;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private isOp(text: string): boolean {
    const t = this.peek();
    return t?.type === 'op' && t.text === text;
  }

  private expect(text: string): void {
    if (!this.isOp(text)) throw new CalcError(`expected '${text}'`);
    this.i++;
  }

  private nest<T>(f: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new CalcError('expression nested too deeply');
    try {
      return f();
    } finally {
      this.depth--;
    }
  }

  private expression(): Value {
    let value = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.tokens[this.i++]!.text;
      const right = this.term();
      value = op === '+' ? add(value, right) : add(value, negate(right));
    }
    return value;
  }

  private term(): Value {
    let value = this.unary();
    for (;;) {
      const t = this.peek();
      if (t?.type !== 'op' || !['*', '/', '//', '%'].includes(t.text)) return value;
      this.i++;
      const right = this.unary();
      if (t.text === '*') value = multiply(value, right);
      else if (t.text === '/') value = divide(value, right);
      else if (t.text === '//') value = floorDivide(value, right);
      else value = modulo(value, right);
    }
  }

  private unary(): Value {
    if (this.isOp('-')) {
      this.i++;
      return this.nest(() => negate(this.unary()));
    }
    if (this.isOp('+')) {
      this.i++;
      return this.nest(() => this.unary());
    }
    return this.power();
  }

  private power(): Value {
    const base = this.postfix();
    if (this.isOp('^') || this.isOp('**')) {
      this.i++;
      return power(
        base,
        this.nest(() => this.unary()),
      );
    }
    return base;
  }

  private postfix(): Value {
    let value = this.primary();
    while (this.isOp('!')) {
      this.i++;
      value = factorial(value);
    }
    return value;
  }

  private primary(): Value {
    const t = this.peek();
    if (!t) throw new CalcError('unexpected end of expression');
    if (t.type === 'num') {
      this.i++;
      return parseNumber(t.text);
    }
    if (t.type === 'name') {
      this.i++;
      const name = t.text.toLowerCase();
      if (this.isOp('(')) {
        const fn = FUNCTIONS[name];
        if (!fn) throw new CalcError(`unknown function '${t.text}'`);
        this.i++;
        const args: Value[] = [];
        if (!this.isOp(')')) {
          for (;;) {
            args.push(this.nest(() => this.expression()));
            if (this.isOp(',')) {
              this.i++;
              continue;
            }
            break;
          }
        }
        this.expect(')');
        return fn(args);
      }
      const constant = CONSTANTS[name];
      if (!constant) throw new CalcError(`unknown name '${t.text}'`);
      return constant;
    }
    if (t.text === '(') {
      this.i++;
      const value = this.nest(() => this.expression());
      this.expect(')');
      return value;
    }
    throw new CalcError(`unexpected '${t.text}'`);
  }
}

/** Python's '{:g}': 6 significant digits, trailing zeros dropped, exponent form when far from 1. */
export function formatG(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const exponent = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(6)))));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, exp] = x.toExponential(5).split('e');
    const m = mantissa!.replace(/\.?0+$/, '');
    const e = Number(exp);
    return `${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return x
    .toFixed(Math.max(0, 5 - exponent))
    .replace(/\.?0+$/, '')
    .replace(/^-0$/, '-0');
}

export function formatValue(v: Value): string {
  if (v.kind === 'float') return formatG(v.x);
  return v.d === 1n ? v.n.toString() : `${v.n}/${v.d}`;
}

/** Evaluates an expression and formats the result; throws CalcError on bad input. */
export function evaluate(source: string): string {
  if (source.length > MAX_INPUT) throw new CalcError(`the expression is longer than ${MAX_INPUT} characters`);
  return formatValue(new Parser(tokenize(source)).parse());
}
