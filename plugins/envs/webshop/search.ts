/**
 * The shop's search engine: Okapi BM25 over each product's title, attributes and category.
 * idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (never negative), and a product's score is
 * sum over distinct query terms of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgLen)).
 * Products with no query term score 0 and are not returned; ties keep catalog order.
 */
import type { Product } from './catalog';
import { contentTerms } from './text';

export interface Bm25Options {
  k1?: number;
  b?: number;
}

export class SearchIndex {
  private readonly termCounts: Map<string, number>[];
  private readonly lengths: number[];
  private readonly averageLength: number;
  private readonly documentFrequency = new Map<string, number>();
  private readonly k1: number;
  private readonly b: number;

  constructor(
    private readonly products: readonly Product[],
    options: Bm25Options = {},
  ) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.termCounts = products.map((product) => {
      const counts = new Map<string, number>();
      for (const term of contentTerms(searchableText(product))) counts.set(term, (counts.get(term) ?? 0) + 1);
      return counts;
    });
    this.lengths = this.termCounts.map((counts) => [...counts.values()].reduce((a, b) => a + b, 0));
    this.averageLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.lengths.length) || 1;
    for (const counts of this.termCounts) for (const term of counts.keys()) this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
  }

  /** BM25 score of every product for `query`, in catalog order. */
  scores(query: string): number[] {
    const queryTerms = [...new Set(contentTerms(query))];
    const n = this.products.length;
    const idf = queryTerms.map((term) => {
      const df = this.documentFrequency.get(term) ?? 0;
      return Math.log(1 + (n - df + 0.5) / (df + 0.5));
    });
    return this.termCounts.map((counts, doc) => {
      const norm = this.k1 * (1 - this.b + (this.b * this.lengths[doc]!) / this.averageLength);
      let score = 0;
      queryTerms.forEach((term, i) => {
        const tf = counts.get(term) ?? 0;
        if (tf > 0) score += (idf[i]! * tf * (this.k1 + 1)) / (tf + norm);
      });
      return score;
    });
  }

  /** The best `limit` matching products, best first. */
  search(query: string, limit: number): Product[] {
    const scores = this.scores(query);
    return scores
      .map((score, index) => ({ score, index }))
      .filter((hit) => hit.score > 0)
      .sort((x, y) => y.score - x.score || x.index - y.index)
      .slice(0, limit)
      .map((hit) => this.products[hit.index]!);
  }
}

function searchableText(product: Product): string {
  return [product.title, ...product.attributes, product.category].join(' ');
}
