/**
 * Where the catalog comes from: the small generated one shipped inside the binary, or the user's
 * files in WebShop's format. Loaded catalogs and their search index are shared by every env of
 * the process that names the same files, since a batch builds many envs at once.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildCatalog, type Catalog, CatalogError, hasGoalLists, parseJson } from './catalog';
import shippedGoals from './data/goals.json';
import shippedProducts from './data/products.json';
import { SearchIndex } from './search';

export interface Store {
  catalog: Catalog;
  index: SearchIndex;
  /** Whether the goals file is in items_human_ins form (a list of goals per asin); the shipped goals are generated. */
  humanGoals: boolean;
}

const loaded = new Map<string, Store>();

function read(path: string, shown: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CatalogError(code === 'ENOENT' ? `${shown}: no such file` : `${shown}: cannot be read (${code ?? 'unknown error'})`);
  }
  return parseJson(text, shown);
}

/**
 * The catalog of `files` (paths relative to `cwd`), or the shipped one when `files` is null; with
 * `numProducts`, only its first that many products and their goals (WebShop's num_products).
 * Throws a one-line CatalogError naming the file for missing or malformed files.
 */
export function openStore(files: { products: string; goals: string } | null, cwd: string, numProducts: number | null = null): Store {
  const key = `${files === null ? '' : `${resolve(cwd, files.products)}\n${resolve(cwd, files.goals)}`}\n${numProducts ?? ''}`;
  let store = loaded.get(key);
  if (store) return store;
  let catalog: Catalog;
  let humanGoals = false;
  if (files === null) catalog = buildCatalog(shippedProducts, 'webshop/data/products.json', shippedGoals, 'webshop/data/goals.json');
  else {
    const goals = read(resolve(cwd, files.goals), files.goals);
    catalog = buildCatalog(read(resolve(cwd, files.products), files.products), files.products, goals, files.goals);
    humanGoals = hasGoalLists(goals);
  }
  if (numProducts !== null) catalog = firstProducts(catalog, numProducts);
  store = { catalog, index: new SearchIndex(catalog.products), humanGoals };
  loaded.set(key, store);
  return store;
}

function firstProducts(catalog: Catalog, count: number): Catalog {
  const products = catalog.products.slice(0, count);
  const byAsin = new Map(products.map((p) => [p.asin, p]));
  return { products, byAsin, goals: catalog.goals.filter((g) => byAsin.has(g.asin)) };
}
