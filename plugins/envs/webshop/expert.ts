/**
 * WebShop's worked solution (WarmStartHooks.solutionAction), a shopper that decides from what the
 * page shows and the instruction says, never from which product the goal was written for:
 *
 *   search page   search for the instruction up to its options and price ("i need a hair dryer
 *                 that is lightweight"): the words a small policy can copy from the page's start
 *   results page  open the first product not opened since the search; Next > when all were
 *   item page     when the product offers every option value asked for and costs no more than the
 *                 limit, choose the values (one a step, in the instruction's order), then Buy Now;
 *                 otherwise < Prev, back to the results
 *   sub-pages     < Prev
 *
 * Checking the first three results so solves 56 of webshop/v1's 59 goals within ten actions;
 * buying the first result solves 41.
 */
import type { Goal, Product } from './catalog';
import { BACK_TO_SEARCH, BUY_NOW, type Clickable, NEXT, PREV, type Shop } from './shop';

/** The instruction up to its options and price: `i need a hair dryer that is lightweight`. */
export function searchQuery(instruction: string): string {
  const end = instruction.search(/, with |, and price /);
  return (end === -1 ? instruction : instruction.slice(0, end)).trim();
}

/** Whether `product` offers every option value `goal` asks for, at no more than its price limit. */
function fits(goal: Goal, product: Product): boolean {
  const offered = new Set(product.options.flatMap((group) => group.values));
  return product.price <= goal.priceUpper && goal.options.every((o) => offered.has(o.value));
}

/**
 * The action `click[...]` or `search[...]` the shopper takes on the shop's current page; `label`
 * names a button as the page shows it (compact pages number their products).
 */
export function expertAction(shop: Shop, goal: Goal, label: (button: Clickable) => string = (button) => button.label): string {
  switch (shop.page) {
    case 'search':
      return `search[${searchQuery(goal.instruction)}]`;
    case 'results': {
      const next = shop.pageResults().find((p) => !shop.visited.has(p.asin));
      if (next) return `click[${label(shop.find(next.asin)!)}]`;
      return `click[${shop.resultsPage < shop.pageCount ? NEXT : BACK_TO_SEARCH}]`;
    }
    case 'item': {
      const product = shop.product!;
      if (!fits(goal, product)) return `click[${PREV}]`;
      const chosen = new Set(shop.chosen.values());
      const missing = goal.options.find((o) => !chosen.has(o.value));
      return `click[${missing ? missing.value : BUY_NOW}]`;
    }
    default:
      return `click[${PREV}]`;
  }
}
