/**
 * The shop's pages as HTML element trees, laid out as WebShop's page templates lay out theirs
 * (web_agent_site/templates): the same elements in the same order, so the observation modes read
 * them as WebShop reads its pages. The instruction heads every page; buttons are `button.btn`,
 * result links `a.product-link`, option values radio inputs with a label. Left out: stylesheets,
 * scripts, product images (the shop has none), the addresses forms and links lead to, and the
 * done page's hidden target block and MTurk code; the done page shows what was bought and the score.
 */
import type { Product } from './catalog';
import { type Element, h } from './html';
import { BACK_TO_SEARCH, BUY_NOW, NEXT, PREV, type Shop } from './shop';
import { clip } from './text';
import { optionsJson } from './url';

export interface PageSettings {
  /** Longest description, feature or review text a sub-page shows, in characters. */
  maxTextChars: number;
}

/** What the done page reports. */
export interface Purchase {
  product: Product;
  chosen: ReadonlyMap<string, string>;
  /** The score as the page prints it. */
  score: string;
}

const page = (...body: Array<Element | null>) => h('html', {}, h('head', {}, h('title', {}, 'WebShop')), h('body', {}, ...body));
const button = (label: string, kind = 'btn btn-primary') => h('form', { method: 'post' }, h('button', { type: 'submit', class: kind }, label));
const instruction = (text: string, label = 'Instruction:') => h('div', { id: 'instruction-text' }, h('h4', {}, label, h('br', {}), text));
/** The head of every page after the search page: the instruction and Back to Search. */
const top = (text: string) => [instruction(text), button(BACK_TO_SEARCH, 'btn btn-success')];

export function renderPage(shop: Shop, instructionText: string, settings: PageSettings): Element {
  switch (shop.page) {
    case 'search':
      return page(
        h('div', { id: 'logo' }, h('h2', {}, 'WebShop')),
        instruction(instructionText, 'Instruction: '),
        h(
          'form',
          { id: 'form-buscar', method: 'post' },
          h('input', { id: 'search_input', type: 'text', name: 'search_query', placeholder: 'Search...' }),
          h('button', { class: 'btn btn-success', type: 'submit' }, 'Search'),
        ),
      );
    case 'results':
      return page(...top(instructionText), ...resultsBody(shop));
    case 'item':
      return page(...top(instructionText), button(PREV), ...itemBody(shop));
    default:
      return page(...top(instructionText), button(PREV), sectionBody(shop, settings));
  }
}

function resultsBody(shop: Shop): Element[] {
  const body = [h('h3', {}, `Page ${shop.resultsPage} (Total results: ${shop.results.length})`)];
  if (shop.resultsPage > 1) body.push(button(PREV));
  if (shop.resultsPage < shop.pageCount) body.push(button(NEXT));
  for (const product of shop.pageResults()) {
    body.push(
      h(
        'div',
        { class: 'searched-product' },
        h('h4', { class: 'product-asin' }, h('a', { class: 'product-link' }, product.asin)),
        h('h4', { class: 'product-title' }, product.title),
        h('h5', { class: 'product-price' }, product.priceTag),
      ),
    );
  }
  return body;
}

function itemBody(shop: Shop): Element[] {
  const product = shop.product!;
  const options = product.options.map((group) =>
    h(
      'div',
      {},
      h('h4', {}, group.type),
      h(
        'div',
        { class: 'radio-toolbar' },
        ...group.values.flatMap((value, i) => {
          const id = `radio_${group.type}${i}`;
          const input = h('input', { type: 'radio', id, name: group.type, value });
          if (shop.chosen.get(group.type) === value) input.attrs.checked = 'checked';
          return [input, h('label', { for: id }, value)];
        }),
      ),
    ),
  );
  return [
    ...options,
    h('h2', {}, product.title),
    h('h4', {}, `Price: ${product.priceTag}`),
    h('h4', {}, `Rating: ${product.rating}`),
    ...shop.sections.map((s) => button(s.label)),
    button(BUY_NOW, 'btn btn-lg purchase'),
  ];
}

function sectionBody(shop: Shop, settings: PageSettings): Element {
  const product = shop.product!;
  const max = settings.maxTextChars;
  const card = (name: string, ...children: Element[]) => h('div', { class: 'card card-body', name }, ...children);
  switch (shop.page) {
    case 'description':
      return card('description', h('p', { class: 'product-info' }, clip(product.description, max)));
    case 'features':
      return card('bulletpoints', h('ul', {}, ...product.features.map((f) => h('li', {}, h('p', { class: 'product-info' }, clip(f, max))))));
    case 'attributes':
      return card(
        'attributes',
        h('ul', {}, ...product.attributes.map((a) => h('li', {}, h('p', { class: 'attribute' }, a)))),
        h('h5', { class: 'product-category' }, product.category),
        h('h5', { class: 'product-query' }, product.query),
        h('h5', { class: 'product-product_category' }, product.productCategory.join(' › ')),
      );
    default:
      return card(
        'reviews',
        ...product.reviews.map((r) =>
          h(
            'div',
            { class: 'card' },
            r.title === '' ? null : h('h4', { class: 'blue-text' }, `"${r.title}"`),
            r.score === null ? null : h('p', {}, h('span', {}, r.score)),
            h('p', { class: 'content' }, clip(r.body, max)),
          ),
        ),
      );
  }
}

/** The page after Buy Now. */
export function donePage(purchase: Purchase): Element {
  return page(
    h('div', { id: 'thankyou' }, h('h1', {}, 'Thank you for shopping with us!')),
    h(
      'div',
      { id: 'stats' },
      h('h2', {}, 'Purchased'),
      h('h4', { id: 'asin' }, 'asin', h('pre', {}, purchase.product.asin)),
      h('h4', { id: 'options' }, 'options', h('pre', {}, optionsJson(purchase.chosen))),
      h('h3', { id: 'reward' }, 'Your score (min 0.0, max 1.0)', h('pre', {}, purchase.score)),
    ),
  );
}
