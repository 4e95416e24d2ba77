/**
 * A page as a tree of elements: written out as HTML for the html observation mode, and walked for
 * its text nodes (with the element each sits in) by the text modes, the way WebShop reads its
 * pages with BeautifulSoup. Only real text is a node: the indentation of the written HTML is not
 * (WebShop's text observations carry no empty segments either).
 */

export type Attributes = Record<string, string>;

export interface Element {
  tag: string;
  attrs: Attributes;
  children: Array<Element | string>;
}

/** An element; empty strings and nulls among the children are dropped (an empty template value leaves no text node). */
export function h(tag: string, attrs: Attributes, ...children: Array<Element | string | null>): Element {
  return { tag, attrs, children: children.filter((c): c is Element | string => c !== null && c !== '') };
}

const VOID = new Set(['br', 'input', 'img', 'meta', 'link']);

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttr = (text: string) => escapeText(text).replace(/"/g, '&quot;');

/** The element as indented HTML; an element holding only text stays on one line. */
export function toHtml(node: Element, depth = 0): string {
  const pad = '  '.repeat(depth);
  const attrs = Object.entries(node.attrs)
    .map(([name, value]) => ` ${name}="${escapeAttr(value)}"`)
    .join('');
  const open = `${pad}<${node.tag}${attrs}>`;
  if (VOID.has(node.tag)) return open;
  if (node.children.every((c) => typeof c === 'string' || VOID.has(c.tag)))
    return `${open}${node.children.map((c) => (typeof c === 'string' ? escapeText(c) : toHtml(c).trim())).join('')}</${node.tag}>`;
  const inner = node.children.map((c) => (typeof c === 'string' ? `${pad}  ${escapeText(c)}` : toHtml(c, depth + 1)));
  return [open, ...inner, `${pad}</${node.tag}>`].join('\n');
}

export interface TextNode {
  text: string;
  parent: Element;
}

/** Tags whose text a browser does not show (WebShop's tag_visible). */
const HIDDEN = new Set(['style', 'script', 'head', 'title', 'meta']);

/** The visible text nodes in document order. */
export function visibleTexts(node: Element, into: TextNode[] = []): TextNode[] {
  if (HIDDEN.has(node.tag)) return into;
  for (const child of node.children) {
    if (typeof child === 'string') into.push({ text: child, parent: node });
    else visibleTexts(child, into);
  }
  return into;
}

/** Every element in document order. */
export function elements(node: Element, into: Element[] = []): Element[] {
  into.push(node);
  for (const child of node.children) if (typeof child !== 'string') elements(child, into);
  return into;
}

/** Whether the element's class list includes `name`. */
export function hasClass(node: Element, name: string): boolean {
  return (node.attrs.class ?? '').split(/\s+/).includes(name);
}
