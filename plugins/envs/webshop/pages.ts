/**
 * The shop's pages as text, in the spirit of WebShop's text mode: every button in square brackets
 * exactly as it is clicked, the instruction at the top, and the actions the page allows at the end.
 */
import { BACK_TO_SEARCH, BUY_NOW, NEXT, PREV, SECTIONS, type Shop } from './shop';
import { clip } from './text';

export interface PageSettings {
  /** Longest description, feature list or review list a sub-page shows, in characters. */
  maxTextChars: number;
}

/** The actions the current page allows, as they would be written: search[...] and click[...]. */
export function availableActions(shop: Shop): string[] {
  if (shop.canSearch) return ['search[<your query>]'];
  return shop.clickables().map((b) => `click[${b.label}]`);
}

export function renderPage(shop: Shop, instruction: string, settings: PageSettings): string {
  const lines = [`Instruction: ${instruction}`];
  switch (shop.page) {
    case 'search':
      lines.unshift('WebShop');
      lines.push('[Search]');
      break;
    case 'results':
      lines.push(...resultsPage(shop));
      break;
    case 'item':
      lines.push(...itemPage(shop));
      break;
    default:
      lines.push(...sectionPage(shop, settings));
  }
  lines.push('', `Available actions: ${availableActions(shop).join(', ')}`);
  return lines.join('\n');
}

function resultsPage(shop: Shop): string[] {
  const lines = [`[${BACK_TO_SEARCH}]`];
  if (shop.results.length === 0) {
    lines.push(`No results for "${shop.query}".`);
    return lines;
  }
  lines.push(`Results for "${shop.query}": page ${shop.resultsPage} of ${shop.pageCount} (${shop.results.length} results)`);
  const paging = [shop.resultsPage > 1 ? `[${PREV}]` : '', shop.resultsPage < shop.pageCount ? `[${NEXT}]` : ''].filter(Boolean);
  if (paging.length > 0) lines.push(paging.join(' '));
  for (const product of shop.pageResults()) lines.push('', `[${product.asin}]`, product.title || '(no title)', product.priceTag);
  return lines;
}

function itemPage(shop: Shop): string[] {
  const product = shop.product!;
  const lines = [`[${BACK_TO_SEARCH}]`, `[${PREV}]`];
  const clickable = new Set(shop.clickables().map((b) => b.label));
  for (const group of product.options) {
    const values = group.values.map((v) => (clickable.has(v) ? `[${v}]` : v));
    lines.push(`${group.type}: ${values.join(' ')}`);
  }
  if (shop.chosen.size > 0) lines.push(`Chosen: ${[...shop.chosen].map(([type, value]) => `${type}: ${value}`).join(', ')}`);
  lines.push(product.title || '(no title)', `Price: ${product.priceTag}`, `Rating: ${product.rating}`);
  lines.push([...SECTIONS.map((s) => `[${s.label}]`), `[${BUY_NOW}]`].join(' '));
  return lines;
}

function sectionPage(shop: Shop, settings: PageSettings): string[] {
  const product = shop.product!;
  const lines = [`[${BACK_TO_SEARCH}]`, `[${PREV}]`];
  const max = settings.maxTextChars;
  switch (shop.page) {
    case 'description':
      lines.push('Description:', clip(product.description || '(none)', max));
      break;
    case 'features':
      lines.push('Features:', clip(product.features.map((f) => `- ${f}`).join('\n') || '(none)', max));
      break;
    default: {
      const reviews = product.reviews.map((r) => [r.score === null ? '' : `(${r.score} stars)`, r.title, r.body].filter(Boolean).join(' '));
      lines.push('Reviews:', clip(reviews.map((r) => `- ${r}`).join('\n') || '(none)', max));
    }
  }
  return lines;
}
