/**
 * Elements built from data without ever parsing it as HTML: text goes in through text nodes only,
 * attributes through setAttribute from a fixed list (no event handlers, no style, no src), and links
 * only to the console's own routes. Everything the API answers is shown through here.
 */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | undefined>;

const ALLOWED_ATTRIBUTES = new Set([
  'class',
  'id',
  'href',
  'type',
  'value',
  'placeholder',
  'for',
  'autocomplete',
  'datetime',
  'title',
  'role',
  'selected',
  'disabled',
  'required',
  'spellcheck',
  'aria-live',
  'aria-label',
  'aria-busy',
]);

function setAttribute(el: Element, name: string, value: string): void {
  if (!ALLOWED_ATTRIBUTES.has(name) && !name.startsWith('data-')) throw new Error(`attribute ${name} is not allowed`);
  if (name === 'href' && !value.startsWith('#/')) throw new Error('links lead to console routes only');
  el.setAttribute(name, value);
}

/** An element with attributes and children; strings become text nodes, never markup. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) setAttribute(el, name, value);
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? text(String(child)) : child);
  }
}

export const text = (value: string): Text => document.createTextNode(value);

/** Replaces what a container shows. */
export function show(container: Element, ...children: Child[]): void {
  container.replaceChildren();
  append(container, ...children);
}
