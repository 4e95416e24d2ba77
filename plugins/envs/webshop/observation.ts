/**
 * WebShop's observation modes (web_agent_text_env.py), over our pages:
 *
 *   html       the page's HTML
 *   text       the page's visible texts, each trimmed, joined by " [SEP] "
 *   text_rich  one visible text a line, buttons as "[button] X [button_]", option labels indented
 *              and "[clicked button]" when the item page's address holds the value (a line
 *              "You have clicked X." then heads the page), result links on a line of their own,
 *              "[clicked button]" when opened since the last search page
 *   url        the page's address (url.ts)
 *
 * ROLL's WebShop env appends the actions the page allows to every observation:
 * "\nAvailable actions: search[<content>], click[back to search], ...", read off the page as
 * WebShop does: the search box, then buttons and result links in lower case, then option values.
 */
import { type Element, elements, hasClass, toHtml, visibleTexts } from './html';

export const OBSERVATION_MODES = ['html', 'text', 'text_rich', 'url'] as const;
export type ObservationMode = (typeof OBSERVATION_MODES)[number];
/** WebShop's modes and agentic's compact one (compact.ts), which reads the shop rather than the page. */
export const ENV_OBSERVATION_MODES = [...OBSERVATION_MODES, 'compact'] as const;

/** What a mode may read: the page, its address and the asins opened since the last search page. */
export interface View {
  page: Element;
  url: string;
  visited: ReadonlySet<string>;
}

export function observe(mode: ObservationMode, view: View): string {
  switch (mode) {
    case 'html':
      return toHtml(view.page);
    case 'text':
      return visibleTexts(view.page)
        .map((t) => t.text.trim())
        .join(' [SEP] ');
    case 'text_rich':
      return richText(view);
    case 'url':
      return view.url;
  }
}

function richText(view: View): string {
  let observation = '';
  for (const { text, parent } of visibleTexts(view.page)) {
    let shown: string;
    if (parent.tag === 'button') shown = `[button] ${text} [button_]`;
    else if (parent.tag === 'label') {
      const clicked = view.url.includes(`"${text}"`);
      if (clicked) observation = `You have clicked ${text}.\n${observation}`;
      shown = clicked ? `  [clicked button] ${text} [clicked button_]` : `  [button] ${text} [button_]`;
    } else if (parent.attrs.class === 'product-link') {
      shown = view.visited.has(text) ? `\n[clicked button] ${text} [clicked button_]` : `\n[button] ${text} [button_]`;
    } else shown = text;
    observation += `${shown}\n`;
  }
  return observation;
}

const textOf = (node: Element): string => node.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');

/** The actions the page allows, as ROLL lists them. */
export function availableActions(page: Element): string[] {
  const all = elements(page);
  const clickables = new Set<string>();
  for (const e of all) if (hasClass(e, 'btn')) clickables.add(textOf(e).toLowerCase());
  for (const e of all) if (hasClass(e, 'product-link')) clickables.add(textOf(e).toLowerCase());
  for (const e of all) if (e.tag === 'input' && e.attrs.type === 'radio') clickables.add(e.attrs.value ?? '');
  const actions = all.some((e) => e.attrs.id === 'search_input') ? ['search[<content>]'] : [];
  for (const name of clickables) if (name !== 'search') actions.push(`click[${name}]`);
  return actions;
}
