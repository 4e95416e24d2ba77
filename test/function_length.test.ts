/**
 * A function fits on a screen: no function, method, arrow function, getter, setter or constructor
 * in src/ is longer than 80 lines (its first line to its last, both counted), unless the comment
 * block right above its first line (its JSDoc, or `//` lines) says why it must be long with the
 * words "long because", e.g. `/** ... long because each case reads the one before it. *\/`.
 * A function nested in another is measured on its own; the outer one counts the inner's lines too.
 *
 * Each file is parsed with swc. Its spans are byte offsets (UTF-8) from a base that is swc's
 * business (a source map that may grow from one parse to the next), so every file is parsed with
 * one `;` in front of it: that empty statement sits at the file's byte 0, and every span is read
 * against it.
 */
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseSync } from '@swc/core';

const ROOT = resolve(import.meta.dir, '..');
const MAX_LINES = 80;
const EXEMPTION = /long because/i;

interface Span {
  start: number;
  end: number;
}

interface Node {
  type?: string;
  span?: Span;
  [field: string]: unknown;
}

/** A function longer than the limit: where it starts and how many lines it has. */
export interface LongFunction {
  line: number;
  name: string;
  lines: number;
}

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'Constructor',
  'MethodProperty',
  'GetterProperty',
  'SetterProperty',
]);

/** The functions of `source` longer than `max` lines that do not say why. */
export function longFunctions(source: string, max = MAX_LINES): LongFunction[] {
  // a shebang is no TypeScript swc reads after the `;`: the same bytes as a line comment
  const text = source.startsWith('#!') ? `//${source.slice(2)}` : source;
  const module = parseSync(`;${text}`, { syntax: 'typescript', tsx: false }) as unknown as { body: Node[] };
  const base = module.body[0]!.span!.start + 1;
  const lineStarts = lineStartBytes(text);
  const lineOf = (byte: number) => upperBound(lineStarts, byte);
  const lines = text.split('\n');
  const found: LongFunction[] = [];
  walk(module, undefined, 'the module', (node, name) => {
    if (!hasBody(node)) return;
    const first = lineOf(node.span!.start - base);
    const last = lineOf(node.span!.end - base - 1);
    const count = last - first + 1;
    if (count > max && !EXEMPTION.test(commentAbove(lines, first))) found.push({ line: first, name, lines: count });
  });
  return found;
}

/**
 * Calls `visit` on every function in `node` with the name it goes by: its own, else what it is
 * assigned to (`label`: a variable, a property), else "(callback in f)" or "(anonymous in f)" after
 * the function `outer` it sits in.
 */
function walk(node: unknown, label: string | undefined, outer: string, visit: (fn: Node, name: string) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, label, outer, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const n = node as Node;
  const children = (childLabel: string | undefined, childOuter: string) => {
    for (const [field, value] of Object.entries(n)) if (field !== 'span') walk(value, childLabel, childOuter, visit);
  };
  // objects without a type (a call's arguments, a method's function) pass the label through
  if (n.type === undefined) return children(label, outer);
  if (FUNCTION_TYPES.has(n.type)) {
    const name = ownName(n) ?? label ?? `(anonymous in ${outer})`;
    visit(n, name);
    return children(undefined, name);
  }
  if (n.type === 'CallExpression' || n.type === 'NewExpression') return children(`(callback in ${outer})`, outer);
  children(ownName(n), outer);
}

/** The name a node gives itself (a declared function, a method) or the function assigned in it. */
function ownName(n: Node): string | undefined {
  switch (n.type) {
    case 'FunctionDeclaration':
    case 'FunctionExpression':
      return keyName(n.identifier);
    case 'Constructor':
      return 'constructor';
    case 'ClassMethod':
    case 'PrivateMethod':
    case 'MethodProperty':
    case 'GetterProperty':
    case 'SetterProperty':
    case 'KeyValueProperty':
    case 'ClassProperty':
    case 'PrivateProperty':
      return keyName(n.key);
    case 'VariableDeclarator':
      return keyName(n.id);
    default:
      return undefined;
  }
}

function keyName(key: unknown): string | undefined {
  if (key === null || typeof key !== 'object') return undefined;
  const k = key as Node;
  if (k.type === 'Identifier' || k.type === 'StringLiteral') return String(k.value);
  if (k.type === 'PrivateName') return `#${keyName(k.id) ?? ''}`;
  if (k.type === 'Computed') return '[computed]';
  return undefined;
}

/** Declarations of overloads and abstract methods have no body to measure. */
function hasBody(n: Node): boolean {
  const fn = (n.function as Node | undefined) ?? n;
  return fn.body !== null && fn.body !== undefined;
}

/** The byte at which each line starts; line i (1-based) starts at [i - 1]. */
function lineStartBytes(text: string): number[] {
  const bytes = Buffer.from(text, 'utf8');
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) starts.push(i + 1);
  return starts;
}

/** How many of the sorted `starts` are at or before `byte`: the 1-based line of that byte. */
function upperBound(starts: readonly number[], byte: number): number {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! <= byte) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The comment block ending on the line right above line `line` (1-based): a block comment or `//` lines; '' when there is none. */
function commentAbove(lines: readonly string[], line: number): string {
  let i = line - 2;
  const above = (lines[i] ?? '').trim();
  if (above.endsWith('*/')) {
    const block: string[] = [];
    while (i >= 0) {
      block.unshift(lines[i]!);
      if (lines[i]!.includes('/*')) return block.join('\n');
      i--;
    }
    return '';
  }
  const block: string[] = [];
  while (i >= 0 && lines[i]!.trim().startsWith('//')) block.unshift(lines[i--]!);
  return block.join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** A function of `bodyLines` lines in all: its first line, `bodyLines - 2` statements, its closing brace. */
function functionOf(header: string, bodyLines: number, closing = '}'): string {
  return [header, ...Array.from({ length: bodyLines - 2 }, (_, i) => `  const v${i} = ${i};`), closing].join('\n');
}

describe('the function length rule', () => {
  test('holds on src/', () => {
    const src = join(ROOT, 'src');
    const offences = sourceFiles(src).flatMap((file) =>
      longFunctions(readFileSync(file, 'utf8')).map((f) => `${relative(ROOT, file)}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(offences).toEqual([]);
  });

  test('catches a function of 81 lines and passes one of 80', () => {
    expect(longFunctions(functionOf('function passes() {', 80))).toEqual([]);
    expect(longFunctions(functionOf('function fails() {', 81))).toEqual([{ line: 1, name: 'fails', lines: 81 }]);
  });

  test('measures methods, constructors, getters, arrows and callbacks, and names them', () => {
    const source = [
      '// é, ü and 漢字 before: lines are counted in UTF-8 bytes, as swc counts its spans',
      'class Store {',
      functionOf('  constructor() {', 81, '  }'),
      functionOf('  private load(): void {', 82, '  }'),
      functionOf('  get size(): number {', 83, '  }'),
      '}',
      functionOf('export const run = async (x: number) => {', 84, '};'),
      functionOf('[1].forEach((n) => {', 85, '});'),
      functionOf('const table = { build() {', 86, '} };'),
    ].join('\n');
    expect(longFunctions(source)).toEqual([
      { line: 3, name: 'constructor', lines: 81 },
      { line: 84, name: 'load', lines: 82 },
      { line: 166, name: 'size', lines: 83 },
      { line: 250, name: 'run', lines: 84 },
      { line: 334, name: '(callback in the module)', lines: 85 },
      { line: 419, name: 'build', lines: 86 },
    ]);
  });

  test('spares a function whose comment says why it is long, and only that one', () => {
    const why = ['/**', ' * Reads the table.', ' * It is long because each case reads the one before it.', ' */'].join('\n');
    const source = [why, functionOf('function explained() {', 90), '/** Reads the table. */', functionOf('function unexplained() {', 90)].join('\n');
    expect(longFunctions(source)).toEqual([{ line: 96, name: 'unexplained', lines: 90 }]);
    const lineComment = ['// long because the cases are one table', functionOf('function table() {', 90)].join('\n');
    expect(longFunctions(lineComment)).toEqual([]);
  });

  test('reads lines of each file from its own start, however many files were parsed before', () => {
    const source = ['', '', functionOf('function third() {', 81)].join('\n');
    for (let i = 0; i < 3; i++) expect(longFunctions(source)).toEqual([{ line: 3, name: 'third', lines: 81 }]);
    // every named function of real files (with multi-byte characters before some), at a limit of 0
    for (const file of ['src/model/lora.ts', 'src/model/gpu_decode.ts', 'src/bench/model_bench.ts']) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const lines = text.split('\n');
      const named = longFunctions(text, 0).filter((f) => !f.name.startsWith('('));
      expect(named.length).toBeGreaterThan(10);
      for (const f of named) expect(`${file}:${f.line} ${lines[f.line - 1]}`).toContain(f.name);
    }
  });
});
