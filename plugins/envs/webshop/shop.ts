/**
 * The shop's pages and how actions move between them, as in WebShop:
 *
 *   search --search[q]--> results (page 1) --click[<asin>]--> item --click[Description]--> description
 *                          < Prev / Next >                      < Prev: back to the results     < Prev: back to the item
 *   Back to Search (on every page but search): a fresh search page, options and visited items cleared.
 *   The item's sub-pages are Description, Features and Reviews, and Attributes when showAttributes.
 *
 * On the item page a click on an option value chooses it for its type (one value per type);
 * entering an item from the results clears the choices, visiting its sub-pages keeps them.
 * Buttons are matched ignoring case and repeated spaces. Should an option value read like a
 * page button ("reviews"), the page button wins; a value listed under two types belongs to the first.
 */
import type { Product } from './catalog';
import type { SearchIndex } from './search';
import { squish } from './text';

export type Section = 'description' | 'features' | 'reviews' | 'attributes';
export type PageKind = 'search' | 'results' | 'item' | Section;

export const BACK_TO_SEARCH = 'Back to Search';
export const PREV = '< Prev';
export const NEXT = 'Next >';
export const BUY_NOW = 'Buy Now';
const SECTIONS: ReadonlyArray<{ label: string; page: Section }> = [
  { label: 'Description', page: 'description' },
  { label: 'Features', page: 'features' },
  { label: 'Reviews', page: 'reviews' },
];
const ATTRIBUTES: { label: string; page: Section } = { label: 'Attributes', page: 'attributes' };

export type Clickable =
  | { label: string; does: 'back_to_search' | 'prev' | 'next' | 'buy' }
  | { label: string; does: 'open_item'; product: Product }
  | { label: string; does: 'choose_option'; type: string; value: string }
  | { label: string; does: 'open_section'; section: Section };

export interface ShopSettings {
  resultsPerPage: number;
  maxResults: number;
  /** An Attributes sub-page on item pages (WebShop's show_attrs). */
  showAttributes: boolean;
}

/** What a valid action led to. */
export type Outcome = { kind: 'moved'; changed: boolean } | { kind: 'bought'; product: Product; chosen: string[] };

export class Shop {
  page: PageKind = 'search';
  query = '';
  results: Product[] = [];
  /** 1-based. */
  resultsPage = 1;
  product: Product | null = null;
  /** Option type -> chosen value, in the order chosen. */
  readonly chosen = new Map<string, string>();
  /** The asins opened since the last search page (WebShop marks their links as clicked in text_rich). */
  readonly visited = new Set<string>();

  constructor(
    private readonly index: SearchIndex,
    readonly settings: ShopSettings,
  ) {}

  get pageCount(): number {
    return Math.max(1, Math.ceil(this.results.length / this.settings.resultsPerPage));
  }

  /** The products shown on the current results page. */
  pageResults(): Product[] {
    const start = (this.resultsPage - 1) * this.settings.resultsPerPage;
    return this.results.slice(start, start + this.settings.resultsPerPage);
  }

  /** The item page's sub-page buttons, in page order. */
  get sections(): ReadonlyArray<{ label: string; page: Section }> {
    return this.settings.showAttributes ? [...SECTIONS, ATTRIBUTES] : SECTIONS;
  }

  get canSearch(): boolean {
    return this.page === 'search';
  }

  /** The buttons of the current page, in the order the page shows them. */
  clickables(): Clickable[] {
    if (this.page === 'search') return [];
    const buttons: Clickable[] = [{ label: BACK_TO_SEARCH, does: 'back_to_search' }];
    if (this.page === 'results') {
      if (this.resultsPage > 1) buttons.push({ label: PREV, does: 'prev' });
      if (this.resultsPage < this.pageCount) buttons.push({ label: NEXT, does: 'next' });
      for (const product of this.pageResults()) buttons.push({ label: product.asin, does: 'open_item', product });
      return buttons;
    }
    buttons.push({ label: PREV, does: 'prev' });
    if (this.page !== 'item' || !this.product) return buttons;
    const fixed = [...this.sections.map((s) => ({ label: s.label, does: 'open_section' as const, section: s.page })), { label: BUY_NOW, does: 'buy' as const }];
    const taken = new Set([...buttons, ...fixed].map((b) => b.label.toLowerCase()));
    for (const group of this.product.options) {
      for (const value of group.values) {
        if (taken.has(value)) continue;
        taken.add(value);
        buttons.push({ label: value, does: 'choose_option', type: group.type, value });
      }
    }
    return [...buttons, ...fixed];
  }

  /** The clickable whose label is `text` (ignoring case and repeated spaces), if the page has it. */
  find(text: string): Clickable | undefined {
    const wanted = squish(text).toLowerCase();
    return this.clickables().find((b) => squish(b.label).toLowerCase() === wanted);
  }

  /** Runs a search; the caller has checked that the page has a search bar. */
  search(query: string): Outcome {
    this.query = squish(query);
    this.results = this.index.search(this.query, this.settings.maxResults);
    this.resultsPage = 1;
    this.page = 'results';
    return { kind: 'moved', changed: true };
  }

  click(button: Clickable): Outcome {
    const before = this.fingerprint();
    switch (button.does) {
      case 'back_to_search':
        this.page = 'search';
        this.query = '';
        this.results = [];
        this.resultsPage = 1;
        this.visited.clear();
        this.leaveItem();
        break;
      case 'next':
        this.resultsPage++;
        break;
      case 'prev':
        if (this.page === 'results') this.resultsPage--;
        else if (this.page === 'item') {
          this.page = 'results';
          this.leaveItem();
        } else this.page = 'item';
        break;
      case 'open_item':
        this.product = button.product;
        this.visited.add(button.product.asin);
        this.chosen.clear();
        this.page = 'item';
        break;
      case 'choose_option':
        this.chosen.set(button.type, button.value);
        break;
      case 'open_section':
        this.page = button.section;
        break;
      case 'buy':
        return { kind: 'bought', product: this.product!, chosen: [...this.chosen.values()] };
    }
    return { kind: 'moved', changed: this.fingerprint() !== before };
  }

  private leaveItem(): void {
    this.product = null;
    this.chosen.clear();
  }

  private fingerprint(): string {
    return JSON.stringify([this.page, this.query, this.resultsPage, this.product?.asin ?? null, [...this.chosen]]);
  }
}
