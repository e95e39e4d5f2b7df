import { ApiFailure, type Page } from './api.js';
import { append, h, show } from './dom.js';

export const TERMINAL_EVENTS = ['ScaffoldSucceeded', 'ScaffoldFailed', 'ScaffoldCancelled'];

/** A status as a badge; its class is a plain word, whatever the API said. */
export function statusBadge(status: string): HTMLSpanElement {
  const known = /^[a-z]{1,20}$/.test(status) ? status : 'unknown';
  return h('span', { class: `status status-${known}`, 'data-status': known }, status);
}

export const runLink = (id: string, label: string) => h('a', { href: `#/runs/${encodeURIComponent(id)}` }, label);

export function timeCell(time: string | null, label: string): HTMLTableCellElement {
  return h('td', {}, time === null ? label : h('time', { datetime: time, title: time }, label));
}

/** What went wrong, for a person: the API's message for its refusals, a plain sentence otherwise. */
export function problemText(e: unknown): string {
  if (e instanceof ApiFailure) return `${e.status} ${e.code}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

export const errorBox = (e: unknown) => h('p', { class: 'error', role: 'alert' }, problemText(e));

/** A select of options with "all" first; `current` is selected. */
export function choice(id: string, label: string, options: readonly string[], current: string | null) {
  const select = h('select', { id });
  select.append(h('option', { value: '' }, 'all'));
  for (const o of options) select.append(h('option', { value: o, selected: o === current ? '' : undefined }, o));
  return h('label', { for: id }, label, ' ', select);
}

/**
 * A paged list route into a table body: the first page now, "More" after the table for each next
 * one, `empty` when there is nothing at all, the API's refusal in place of the rest.
 */
export async function fillPages<T>(
  body: HTMLElement,
  after: HTMLElement,
  fetchPage: (cursor: string | null) => Promise<Page<T>>,
  row: (item: T) => Node,
  empty: HTMLElement,
): Promise<void> {
  const load = async (cursor: string | null) => {
    try {
      const page = await fetchPage(cursor);
      append(body, ...page.items.map(row));
      show(after);
      if (body.childElementCount === 0) show(after, empty);
      if (page.next_cursor) {
        const more = h('button', { type: 'button' }, 'More');
        more.addEventListener('click', () => void load(page.next_cursor));
        show(after, more);
      }
    } catch (e) {
      show(after, errorBox(e));
    }
  };
  await load(null);
}

/** A list query for the page after `cursor` (the first page without one). */
export function withCursor(query: URLSearchParams, cursor: string | null): URLSearchParams {
  const next = new URLSearchParams(query);
  if (cursor) next.set('cursor', cursor);
  return next;
}
