/**
 * The reward for buying a product, after WebShop's scoring (Yao et al. 2022); the exact formula
 * is written out in index.ts's header.
 */
import type { Goal, Product } from './catalog';
import { containsPhrase, contentTerms, samePhrase, terms } from './text';

export interface PurchaseScore {
  reward: number;
  /** The type factor: 1, 0.5, 0.1 or 0. */
  r_type: number;
  /** Fraction of the requested attributes the product has (1 when none were requested). */
  r_att: number;
  /** Fraction of the requested option values that were chosen (1 when none were requested). */
  r_option: number;
  /** 1 when the price is within the limit, else 0. */
  r_price: number;
  query_match: boolean;
  category_match: boolean;
  /** Fraction of the target title's content words found in the bought product's title. */
  title_score: number;
}

const lower = (text: string) => text.toLowerCase().trim();

/** Whether `product` has `attribute`: among its attributes, or as a phrase in its title, features or description. */
export function hasAttribute(product: Product, attribute: string): boolean {
  if (product.attributes.some((a) => samePhrase(a, attribute))) return true;
  const text = terms([product.title, ...product.features, product.description].join(' '));
  return containsPhrase(text, attribute);
}

/** Share of the target title's distinct content words that the bought title also has. */
export function titleScore(target: Product, bought: Product): number {
  const wanted = new Set(contentTerms(target.title).filter((t) => /[a-z]/.test(t) && t.length > 1));
  if (wanted.size === 0) return 0;
  const have = new Set(contentTerms(bought.title));
  let shared = 0;
  for (const term of wanted) if (have.has(term)) shared++;
  return shared / wanted.size;
}

export function typeFactor(target: Product, bought: Product): Pick<PurchaseScore, 'r_type' | 'query_match' | 'category_match' | 'title_score'> {
  const query_match = lower(target.query) !== '' && lower(target.query) === lower(bought.query);
  const targetLeaf = lower(target.productCategory.at(-1) ?? '');
  const category_match = targetLeaf !== '' && targetLeaf === lower(bought.productCategory.at(-1) ?? '');
  const title_score = titleScore(target, bought);
  let r_type: number;
  if (target.asin === bought.asin || query_match || category_match || title_score > 0.2) r_type = 1;
  else if (title_score >= 0.1) r_type = 0.5;
  else if (title_score > 0) r_type = 0.1;
  else r_type = 0;
  return { r_type, query_match, category_match, title_score };
}

/** Scores buying `bought` with the option values `chosen`, for `goal` whose product is `target`. */
export function scorePurchase(goal: Goal, target: Product, bought: Product, chosen: readonly string[]): PurchaseScore {
  const type = typeFactor(target, bought);
  const attributesMet = goal.attributes.filter((a) => hasAttribute(bought, a)).length;
  const optionsMet = goal.options.filter((o) => chosen.some((value) => samePhrase(value, o.value))).length;
  const priceMet = bought.price <= goal.priceUpper ? 1 : 0;
  const total = goal.attributes.length + goal.options.length + 1;
  return {
    reward: (type.r_type * (attributesMet + optionsMet + priceMet)) / total,
    ...type,
    r_att: goal.attributes.length === 0 ? 1 : attributesMet / goal.attributes.length,
    r_option: goal.options.length === 0 ? 1 : optionsMet / goal.options.length,
    r_price: priceMet,
  };
}
