/**
 * Where the catalog comes from: the small generated one shipped inside the binary, or the user's
 * files in WebShop's format. Loaded catalogs and their search index are shared by every env of
 * the process that names the same files, since a batch builds many envs at once.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildCatalog, CatalogError, parseJson, type Catalog } from './catalog';
import shippedGoals from './data/goals.json';
import shippedProducts from './data/products.json';
import { SearchIndex } from './search';

export interface Store {
  catalog: Catalog;
  index: SearchIndex;
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
 * The catalog of `files` (paths relative to `cwd`), or the shipped one when `files` is null.
 * Throws a one-line CatalogError naming the file for missing or malformed files.
 */
export function openStore(files: { products: string; goals: string } | null, cwd: string): Store {
  const key = files === null ? '' : `${resolve(cwd, files.products)}\n${resolve(cwd, files.goals)}`;
  let store = loaded.get(key);
  if (store) return store;
  const catalog =
    files === null
      ? buildCatalog(shippedProducts, 'webshop/data/products.json', shippedGoals, 'webshop/data/goals.json')
      : buildCatalog(read(resolve(cwd, files.products), files.products), files.products, read(resolve(cwd, files.goals), files.goals), files.goals);
  store = { catalog, index: new SearchIndex(catalog.products) };
  loaded.set(key, store);
  return store;
}
