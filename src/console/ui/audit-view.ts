import type { ApiClient, RunEvent } from './api.js';
import { h, show } from './dom.js';
import { eventSummary } from './format.js';
import { choice, fillPages, runLink, withCursor } from './widgets.js';

/** Where the feed starts unless the fragment says: a day back (the stream may hold years). */
const DEFAULT_HOURS = 24;

function auditRow(e: RunEvent): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-type': e.type },
    h('td', {}, h('time', { datetime: e.time, title: e.time }, e.time.replace('T', ' ').slice(0, 19))),
    h('td', {}, e.run_id ? runLink(e.run_id, e.run_id.slice(0, 8)) : '—'),
    h('td', {}, String(e.seq)),
    h('td', {}, e.type),
    h('td', { class: 'summary' }, eventSummary(e)),
  );
}

/** The audit feed: events of the runs this key may see (all for admins), oldest first from `since`. */
export async function auditView(root: HTMLElement, api: ApiClient, params: URLSearchParams) {
  const { eventTypes } = await api.vocabulary();
  const type = params.get('type') || null;
  const hours = Number(params.get('hours')) > 0 ? Number(params.get('hours')) : DEFAULT_HOURS;
  const hoursInput = h('input', { id: 'audit-hours', type: 'number', value: String(hours) });
  const form = h(
    'form',
    { class: 'filters' },
    choice('audit-type', 'Type', eventTypes, type),
    h('label', { for: 'audit-hours' }, 'Last hours ', hoursInput),
    h('button', { type: 'submit' }, 'Apply'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams({ hours: hoursInput.value || String(DEFAULT_HOURS) });
    const chosen = (form.querySelector('#audit-type') as HTMLSelectElement).value;
    if (chosen) next.set('type', chosen);
    location.hash = `#/audit?${next}`;
  });
  const body = h('tbody', { id: 'audit-body' });
  const after = h('div', { class: 'after-table' });
  const head = ['Time', 'Run', 'Seq', 'Type', 'What'].map((t) => h('th', {}, t));
  show(
    root,
    h('h1', {}, 'Audit feed'),
    form,
    h('table', { class: 'audit' }, h('thead', {}, h('tr', {}, ...head)), body),
    after,
  );

  // The first page from `since`, each next one from its cursor (which wins over `since` in the API).
  const query = new URLSearchParams({ limit: '200', since: new Date(Date.now() - hours * 3600_000).toISOString() });
  if (type) query.set('type', type);
  await fillPages(
    body,
    after,
    (cursor) => api.audit(withCursor(query, cursor)),
    auditRow,
    h('p', { id: 'audit-empty' }, 'No events in this span.'),
  );
}
