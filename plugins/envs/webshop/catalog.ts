/**
 * The shop's catalog: products and the shopping goals that point at them, read from JSON in the
 * shape of the public WebShop data files, read liberally:
 *
 * Products file: a JSON list (items_shuffle*.json). Per product: `asin` (required), `name` or
 * `Title`, `category`, `query`, `product_category` ("A › B › C" or a list), `pricing` or `Price`
 * ("$12.99", "$10.00 to $20.00", a number or a list of them; none means $100.00, as WebShop does),
 * `small_description` or `BulletPoints` (a string or a list), `full_description` or `Description`,
 * `customization_options` or `options` ({type: [{value, image} or "value", ...]}), `Rating`,
 * `Reviews` (strings or {score, title, body}) and, as an extension, `attributes`. Missing fields
 * are empty; products repeating an earlier asin are skipped, as WebShop does.
 *
 * Goals file: an object keyed by asin, each entry either one goal (items_ins_v2*.json:
 * `{attributes, instruction, instruction_attributes, instruction_options}`) or a list of goals
 * (items_human_ins.json); null gives none. `attributes` adds to that product's attributes. `instruction_options`
 * is a list of values or an object {type: value}. Two optional extensions: `price_upper` and
 * `split` ("train" | "val"). Entries without an instruction, or whose asin is not in the products
 * file (the human goals cover more products than the 1000-product file), give no goal.
 *
 * Filling what the real files leave out, deterministically:
 * - the price limit is `price_upper`, else the "price lower than N dollars" in the instruction,
 *   else the price ladder step two above the product's price: (floor(price / 10) + 2) * 10;
 * - the instruction gets ", and price lower than N dollars" when it names no limit, and
 *   " with type: value" for each typed option value it does not mention;
 * - the split is `split`, else "val" for one goal in ten, chosen by a hash of asin and position.
 * A product priced as a range is bought at its low end.
 */
import { hashSeed } from 'agentic';
import { squish } from './text';

export interface Review {
  score: string | null;
  title: string;
  body: string;
}

export interface OptionGroup {
  /** Lower case, e.g. "size". */
  type: string;
  /** Lower case, in the order the product lists them. */
  values: string[];
}

export interface Product {
  asin: string;
  title: string;
  category: string;
  /** The search query the product was listed under (WebShop's `query`): its product type. */
  query: string;
  /** The category path, root first. */
  productCategory: string[];
  /** What buying it costs (the low end of a range). */
  price: number;
  /** The price as listed: "$12.99" or "$10.00 to $20.00". */
  priceTag: string;
  features: string[];
  description: string;
  options: OptionGroup[];
  attributes: string[];
  rating: string;
  reviews: Review[];
}

export interface GoalOption {
  /** The option type when the goal names one ("size"); null when it gives only the value. */
  type: string | null;
  value: string;
}

export type Split = 'train' | 'val';

export interface Goal {
  /** `<asin>#<position in that asin's list>`: stable across loads of the same file. */
  id: string;
  /** The product the goal was written for. */
  asin: string;
  instruction: string;
  attributes: string[];
  options: GoalOption[];
  priceUpper: number;
  split: Split;
}

export interface Catalog {
  products: Product[];
  byAsin: ReadonlyMap<string, Product>;
  goals: Goal[];
}

/** A malformed catalog file; the message is one line naming the file. */
export class CatalogError extends Error {}

type Json = unknown;
type Fields = Record<string, Json>;

const isObject = (value: Json): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first of `keys` that is present and not null. */
function field(entry: Fields, ...keys: string[]): Json {
  for (const key of keys) if (entry[key] !== undefined && entry[key] !== null) return entry[key];
  return undefined;
}

class Reader {
  constructor(readonly file: string) {}

  fail(where: string, problem: string): never {
    throw new CatalogError(`${this.file}: ${where}: ${problem}`);
  }

  text(value: Json, where: string): string {
    if (value === undefined || value === null) return '';
    if (typeof value === 'string') return squish(value);
    if (typeof value === 'number') return String(value);
    if (Array.isArray(value)) return squish(value.map((part) => this.text(part, where)).join(' '));
    return this.fail(where, `expected text, got ${describe(value)}`);
  }

  textList(value: Json, where: string): string[] {
    if (value === undefined || value === null) return [];
    const items = Array.isArray(value) ? value : [value];
    return items.map((item) => this.text(item, where)).filter((item) => item !== '');
  }
}

function describe(value: Json): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** Dollar amounts in a price field, in order: "$10.00 to $1,020.50" gives [10, 1020.5]. */
export function parsePrices(value: Json): number[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(parsePrices);
  if (typeof value !== 'string') return [];
  return (value.match(/\d[\d,]*(?:\.\d+)?/g) ?? []).map((n) => Number(n.replace(/,/g, ''))).filter(Number.isFinite);
}

const DEFAULT_PRICE = 100;

function readProduct(reader: Reader, entry: Json, index: number): Product {
  const where = `item ${index}`;
  if (!isObject(entry)) return reader.fail(where, `expected a product object, got ${describe(entry)}`);
  const asin = reader.text(entry.asin, `${where} asin`);
  if (asin === '') return reader.fail(where, 'has no asin');
  const at = `item ${index} (${asin})`;

  const prices = parsePrices(field(entry, 'pricing', 'Price', 'price')).slice(0, 2);
  const price = prices.length > 0 ? Math.min(...prices) : DEFAULT_PRICE;
  const priceTag = prices.length === 2 && prices[0] !== prices[1] ? `$${prices[0]!.toFixed(2)} to $${prices[1]!.toFixed(2)}` : `$${price.toFixed(2)}`;

  const rawCategory = field(entry, 'product_category');
  const productCategory = (
    Array.isArray(rawCategory) ? reader.textList(rawCategory, `${at} product_category`) : reader.text(rawCategory, `${at} product_category`).split(/\s*[›>]\s*/)
  )
    .map(squish)
    .filter((part) => part !== '');

  return {
    asin,
    title: reader.text(field(entry, 'name', 'Title', 'title'), `${at} name`),
    category: reader.text(entry.category, `${at} category`),
    query: reader.text(entry.query, `${at} query`),
    productCategory,
    price,
    priceTag,
    features: reader.textList(field(entry, 'small_description', 'BulletPoints', 'features'), `${at} small_description`),
    description: reader.text(field(entry, 'full_description', 'Description', 'description'), `${at} full_description`),
    options: readOptions(reader, field(entry, 'customization_options', 'options'), `${at} customization_options`),
    attributes: readAttributes(reader, field(entry, 'attributes', 'Attributes'), `${at} attributes`),
    rating: reader.text(field(entry, 'Rating', 'rating'), `${at} Rating`) || 'N.A.',
    reviews: readReviews(reader, field(entry, 'Reviews', 'reviews'), `${at} Reviews`),
  };
}

function readOptions(reader: Reader, value: Json, where: string): OptionGroup[] {
  if (value === undefined) return [];
  if (!isObject(value)) return reader.fail(where, `expected an object of option lists, got ${describe(value)}`);
  const groups: OptionGroup[] = [];
  for (const [rawType, contents] of Object.entries(value)) {
    if (contents === null || contents === undefined) continue;
    if (!Array.isArray(contents)) return reader.fail(`${where} ${rawType}`, `expected a list of options, got ${describe(contents)}`);
    const values: string[] = [];
    for (const content of contents) {
      const raw = isObject(content) ? content.value : content;
      const optionValue = reader.text(raw, `${where} ${rawType}`).toLowerCase();
      if (optionValue !== '' && !values.includes(optionValue)) values.push(optionValue);
    }
    const type = squish(rawType).toLowerCase();
    if (values.length > 0 && type !== '') groups.push({ type, values });
  }
  return groups;
}

function readAttributes(reader: Reader, value: Json, where: string): string[] {
  return reader.textList(value, where).map((a) => a.toLowerCase());
}

function readReviews(reader: Reader, value: Json, where: string): Review[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return reader.fail(where, `expected a list, got ${describe(value)}`);
  return value.map((review) => {
    if (!isObject(review)) return { score: null, title: '', body: reader.text(review, where) };
    const score = reader.text(field(review, 'score', 'rating', 'stars'), where);
    return { score: score === '' ? null : score, title: reader.text(review.title, where), body: reader.text(field(review, 'body', 'text', 'review'), where) };
  });
}

/** Reads a products file's parsed JSON. */
export function readProducts(json: Json, file: string): Product[] {
  const reader = new Reader(file);
  if (!Array.isArray(json)) return reader.fail('top level', `expected a list of products, got ${describe(json)}`);
  const seen = new Set<string>();
  const products: Product[] = [];
  json.forEach((entry, index) => {
    const product = readProduct(reader, entry, index);
    if (seen.has(product.asin)) return;
    seen.add(product.asin);
    products.push(product);
  });
  if (products.length === 0) reader.fail('top level', 'no products');
  return products;
}

const PRICE_IN_TEXT = /price\s+lower\s+than\s+\$?\s*(\d[\d,]*(?:\.\d+)?)/i;

function priceLadder(price: number): number {
  return (Math.floor(price / 10) + 2) * 10;
}

function readGoalOptions(reader: Reader, value: Json, where: string): GoalOption[] {
  if (value === undefined) return [];
  if (isObject(value)) {
    return Object.entries(value)
      .map(([type, v]) => ({ type: squish(type).toLowerCase(), value: reader.text(v, where).toLowerCase() }))
      .filter((o) => o.value !== '');
  }
  return reader.textList(value, where).map((v) => ({ type: null, value: v.toLowerCase() }));
}

function completeInstruction(text: string, options: GoalOption[], priceUpper: number): string {
  let instruction = text.replace(/[.\s]+$/, '');
  const lower = instruction.toLowerCase();
  const unmentioned = options.filter((o) => o.type !== null && !lower.includes(o.value));
  if (unmentioned.length > 0) instruction += ` with ${unmentioned.map((o) => `${o.type}: ${o.value}`).join(', and ')}`;
  if (!PRICE_IN_TEXT.test(instruction)) instruction += `, and price lower than ${priceUpper.toFixed(2)} dollars`;
  return instruction;
}

/**
 * Reads a goals file's parsed JSON against the products; adds the goal entries' `attributes` to
 * their products (so call it before searching or scoring).
 */
export function readGoals(json: Json, file: string, products: readonly Product[]): Goal[] {
  const reader = new Reader(file);
  if (!isObject(json)) return reader.fail('top level', `expected an object keyed by asin, got ${describe(json)}`);
  const byAsin = new Map(products.map((p) => [p.asin, p]));
  const goals: Goal[] = [];
  for (const [asin, value] of Object.entries(json)) {
    const product = byAsin.get(asin);
    const entries = Array.isArray(value) ? value : [value];
    entries.forEach((entry, position) => {
      const where = Array.isArray(value) ? `${asin}[${position}]` : asin;
      if (entry === null) return;
      if (!isObject(entry)) return reader.fail(where, `expected a goal object, got ${describe(entry)}`);
      const extra = readAttributes(reader, entry.attributes, `${where} attributes`);
      if (product) for (const attribute of extra) if (!product.attributes.includes(attribute)) product.attributes.push(attribute);
      const text = reader.text(entry.instruction, `${where} instruction`);
      if (!product || text === '') return;

      const options = readGoalOptions(reader, field(entry, 'instruction_options', 'goal_options'), `${where} instruction_options`);
      const stated = PRICE_IN_TEXT.exec(text)?.[1];
      let priceUpper = stated !== undefined ? Number(stated.replace(/,/g, '')) : priceLadder(product.price);
      if (entry.price_upper !== undefined) {
        if (typeof entry.price_upper !== 'number' || !(entry.price_upper > 0))
          return reader.fail(`${where} price_upper`, `expected a positive number, got ${describe(entry.price_upper)}`);
        priceUpper = entry.price_upper;
      }
      const id = `${asin}#${position}`;
      let split: Split = hashSeed('webshop-split', id) % 10 === 0 ? 'val' : 'train';
      if (entry.split !== undefined) {
        if (entry.split !== 'train' && entry.split !== 'val') return reader.fail(`${where} split`, `expected "train" or "val", got ${describe(entry.split)}`);
        split = entry.split;
      }
      goals.push({
        id,
        asin,
        instruction: completeInstruction(text, options, priceUpper),
        attributes: readAttributes(reader, field(entry, 'instruction_attributes', 'goal_attributes'), `${where} instruction_attributes`),
        options,
        priceUpper,
        split,
      });
    });
  }
  if (goals.length === 0) reader.fail('top level', 'no goal with an instruction names a product of the products file');
  return goals;
}

/** Whether a goals file's parsed JSON lists goals per asin, as items_human_ins.json does. */
export function hasGoalLists(json: Json): boolean {
  return isObject(json) && Object.values(json).some(Array.isArray);
}

/** Parses a file's text as JSON; the error names the file and stays on one line. */
export function parseJson(text: string, file: string): Json {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();
    throw new CatalogError(`${file}: not valid JSON (${reason})`);
  }
}

export function buildCatalog(productsJson: Json, productsFile: string, goalsJson: Json, goalsFile: string): Catalog {
  const products = readProducts(productsJson, productsFile);
  const goals = readGoals(goalsJson, goalsFile, products);
  return { products, byAsin: new Map(products.map((p) => [p.asin, p])), goals };
}
