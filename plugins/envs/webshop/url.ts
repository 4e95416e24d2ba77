/**
 * The address of the current page, in WebShop's URL scheme (its SimServer), for the url
 * observation mode and for text_rich, which marks an option as clicked when the item page's
 * address holds it:
 *
 *   search page     http://127.0.0.1:3000/<session>
 *   results         .../search_results/<session>/<keyword+keyword>/<page>
 *   item            .../item_page/<session>/<asin>/<keywords>/<page>/<options as JSON>
 *   sub-page        .../item_sub_page/<session>/<asin>/<keywords>/<page>/<Description|...>/<options as a Python dict>
 *   done            .../done/<session>/<asin>/<options as a Python dict>
 *
 * The keywords are the search's words in lower case, as WebShop lower-cases the action; the
 * session is the goal's index in the split (ROLL resets WebShop with that index as the session).
 */
import type { Shop } from './shop';

export const BASE_URL = 'http://127.0.0.1:3000';

/** A string as Python's json.dumps writes it (ASCII only, as its default). */
function jsonString(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Option type -> value as Python's json.dumps writes a dict: {"color": "black", "size": "large"}. */
export function optionsJson(chosen: ReadonlyMap<string, string>): string {
  return `{${[...chosen].map(([k, v]) => `${jsonString(k)}: ${jsonString(v)}`).join(', ')}}`;
}

/** A string as Python's repr writes it: single quotes unless it holds one and no double quote. */
function pythonString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const body = text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}

/** Option type -> value as Python's str of a dict: {'color': 'black'}. */
export function optionsDict(chosen: ReadonlyMap<string, string>): string {
  return `{${[...chosen].map(([k, v]) => `${pythonString(k)}: ${pythonString(v)}`).join(', ')}}`;
}

const keywords = (query: string) => query.toLowerCase().split(' ').join('+');
const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** The current page's address; `bought` once Buy Now was clicked. */
export function pageUrl(shop: Shop, session: string, bought: boolean): string {
  return `${BASE_URL}/${pagePath(shop, session, bought).join('/')}`;
}

function pagePath(shop: Shop, session: string, bought: boolean): string[] {
  const asin = shop.product?.asin ?? '';
  const words = keywords(shop.query);
  const page = String(shop.resultsPage);
  if (bought) return ['done', session, asin, optionsDict(shop.chosen)];
  switch (shop.page) {
    case 'search':
      return [session];
    case 'results':
      return ['search_results', session, words, page];
    case 'item':
      return ['item_page', session, asin, words, page, optionsJson(shop.chosen)];
    default:
      return ['item_sub_page', session, asin, words, page, capitalized(shop.page), optionsDict(shop.chosen)];
  }
}
