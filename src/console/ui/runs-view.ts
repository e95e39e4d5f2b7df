import type { ApiClient, Caller, Run } from './api.js';
import { h, show } from './dom.js';
import { age } from './format.js';
import { choice, fillPages, runLink, statusBadge, timeCell, withCursor } from './widgets.js';

/** The list's filters live in the fragment (#/runs?status=failed&cluster=acme): shareable, and never a key. */
function filtersOf(params: URLSearchParams) {
  return { status: params.get('status') || null, cluster: params.get('cluster') || null };
}

function filterForm(current: { status: string | null; cluster: string | null }, statuses: string[]): HTMLFormElement {
  const cluster = h('input', {
    id: 'filter-cluster',
    type: 'text',
    placeholder: 'cluster name',
    value: current.cluster ?? '',
    spellcheck: 'false',
  });
  const form = h(
    'form',
    { class: 'filters', id: 'runs-filters' },
    choice('filter-status', 'Status', statuses, current.status),
    h('label', { for: 'filter-cluster' }, 'Cluster ', cluster),
    h('button', { type: 'submit' }, 'Apply'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams();
    const status = (form.querySelector('#filter-status') as HTMLSelectElement).value;
    if (status) next.set('status', status);
    if (cluster.value.trim()) next.set('cluster', cluster.value.trim());
    location.hash = `#/runs${next.size ? `?${next}` : ''}`;
  });
  return form;
}

function runRow(run: Run, caller: Caller): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-run-id': run.id },
    h('td', {}, statusBadge(run.status)),
    h('td', {}, runLink(run.id, run.cluster_name)),
    caller.role === 'admin' ? h('td', { class: 'owner' }, run.owner) : null,
    timeCell(run.created_at, age(run.created_at)),
    h('td', { class: 'message' }, run.step ? `${run.step}: ${run.message}` : run.message),
  );
}

/** The runs this key may see, newest first, with status and cluster filters and "more" for the next page. */
export async function runsView(root: HTMLElement, api: ApiClient, caller: Caller, params: URLSearchParams) {
  const filters = filtersOf(params);
  const body = h('tbody', { id: 'runs-body' });
  const table = h(
    'table',
    { class: 'runs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Status'),
        h('th', {}, 'Cluster'),
        caller.role === 'admin' ? h('th', {}, 'Owner') : null,
        h('th', {}, 'Age'),
        h('th', {}, 'Step'),
      ),
    ),
    body,
  );
  const after = h('div', { class: 'after-table' });
  const { statuses } = await api.vocabulary();
  show(root, h('h1', {}, 'Runs'), filterForm(filters, statuses), table, after);

  const query = new URLSearchParams({ limit: '50' });
  if (filters.status) query.set('status', filters.status);
  if (filters.cluster) query.set('cluster_name', filters.cluster);
  await fillPages(
    body,
    after,
    (cursor) => api.runs(withCursor(query, cursor)),
    (r) => runRow(r, caller),
    h('p', { id: 'runs-empty' }, 'No runs to show for this key.'),
  );
}
