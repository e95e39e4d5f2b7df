import { ApiFailure } from './api.js';
import { h } from './dom.js';

export const RUN_STATUSES = ['queued', 'running', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
export const TERMINAL_EVENTS = ['ScaffoldSucceeded', 'ScaffoldFailed', 'ScaffoldCancelled'];

/** A status as a badge; the class comes from a fixed set, whatever the API said. */
export function statusBadge(status: string): HTMLSpanElement {
  const known = (RUN_STATUSES as readonly string[]).includes(status) ? status : 'unknown';
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
