/**
 * The compact observation mode: a page in a few lines, for small policies whose prompts must stay
 * short (a results page of three products is ~100 tokens here against ~290 in text mode). Not one
 * of WebShop's modes. Every button the policy may need is shown in [brackets] with the label
 * click[...] takes, so no actions line follows:
 *
 *   search    the instruction, then [Search]
 *   results   the instruction, one line per product ([n] title price, "(seen)" once opened
 *             since the last search), then the page's navigation buttons. A product's button is
 *             its number on the page: click[2] opens the second (its asin works too), so a small
 *             policy picks a product without copying ten random characters
 *   item      the instruction, a line per option type with its values as buttons (once one is
 *             chosen, that value alone and "(chosen)"; the others still work), the title and
 *             price, then [Buy Now] [< Prev] [Back to Search]; the
 *             Description/Features/Reviews buttons still work but are not shown
 *   sub-page  the instruction, the section's text (clipped), then [< Prev] [Back to Search]
 *   done      what was bought and the score
 */
import type { Purchase } from './pages';
import { BACK_TO_SEARCH, BUY_NOW, type Clickable, NEXT, PREV, type Shop } from './shop';
import { clip } from './text';

const buttons = (...labels: string[]) => labels.map((l) => `[${l}]`).join(' ');

export function compactPage(shop: Shop, instruction: string, purchase: Purchase | null, maxTextChars: number): string {
  if (purchase) return `You bought ${purchase.product.asin}; score ${purchase.score}`;
  const lines = [instruction];
  switch (shop.page) {
    case 'search':
      lines.push(buttons('Search'));
      break;
    case 'results': {
      for (const [i, product] of shop.pageResults().entries()) {
        lines.push(`${buttons(String(i + 1))} ${product.title} ${product.priceTag}${shop.visited.has(product.asin) ? ' (seen)' : ''}`);
      }
      const navigation = [...(shop.resultsPage < shop.pageCount ? [NEXT] : []), ...(shop.resultsPage > 1 ? [PREV] : []), BACK_TO_SEARCH];
      lines.push(buttons(...navigation));
      break;
    }
    case 'item': {
      const product = shop.product!;
      for (const group of product.options) {
        const chosen = shop.chosen.get(group.type);
        // a chosen type shows its value alone: the line looks done, not like one more to click
        lines.push(`${group.type}: ${chosen === undefined ? buttons(...group.values) : `${chosen} (chosen)`}`);
      }
      lines.push(`${product.title} ${product.priceTag}`, buttons(BUY_NOW, PREV, BACK_TO_SEARCH));
      break;
    }
    default: {
      const product = shop.product!;
      const text =
        shop.page === 'description'
          ? product.description
          : shop.page === 'features'
            ? product.features.join(' ')
            : shop.page === 'attributes'
              ? product.attributes.join(', ')
              : product.reviews.map((r) => r.body).join(' ');
      lines.push(clip(text, maxTextChars), buttons(PREV, BACK_TO_SEARCH));
    }
  }
  return lines.join('\n');
}

/** The label a compact page shows for `button`: a product on a results page by its number there. */
export function compactLabel(shop: Shop, button: Clickable): string {
  if (button.does !== 'open_item') return button.label;
  return String(shop.pageResults().indexOf(button.product) + 1);
}

/** The button click[text] names on a compact page: a product's number on a results page, else a label of the page. */
export function findCompact(shop: Shop, text: string): Clickable | undefined {
  if (shop.page === 'results' && /^\d+$/.test(text)) {
    const product = shop.pageResults()[Number(text) - 1];
    return product ? shop.find(product.asin) : undefined;
  }
  return shop.find(text);
}
