import { ApiClient, ApiFailure, type CredentialPlanItem, type Run, type RunEvent } from './api.js';
import { append, h, show } from './dom.js';
import { age, eventSummary, span } from './format.js';
import { errorBox, problemText, statusBadge, TERMINAL_EVENTS } from './widgets.js';

/** How long to wait before following again after a broken connection. */
const RECONNECT_MS = 2000;
/** How often to ask again for a run the read-model has not yet seen end (once a second). */
const MAX_LATE_ANSWERS = 60;
const FINISHED = ['succeeded', 'failed', 'cancelled'];

const CLASS_MEANING: Record<CredentialPlanItem['class'], string> = {
  generated: 'fresh random values made for the new cluster',
  derived: 'built from other credentials of the new cluster',
  supplied: 'given by their issuer, read from the credentials Secret',
  configuration: 'configuration values carried over, not secret material',
  registry: 'registry pull secrets built from the service settings',
  external: 'references to an external secret store (ExternalSecrets), kept: no value passes through here',
};

function details(run: Run): HTMLElement {
  const row = (term: string, ...value: (Node | string)[]) => [h('dt', {}, term), h('dd', {}, ...value)];
  return h(
    'dl',
    { class: 'run-details' },
    ...row('Status', statusBadge(run.status)),
    ...row('Step', run.step ?? '—'),
    ...row('Message', run.message),
    ...row('Repository', `${run.repo_url} (${run.branch})`),
    ...row('Folder', run.gitops_path),
    ...row('Created', run.created_at ? `${run.created_at} (${age(run.created_at)})` : '—'),
    ...row('Finished', run.finished_at ?? '—'),
    ...(run.progress
      ? row('Waited', `${span(run.progress.waited_seconds * 1000)} of ${span(run.progress.deadline_seconds * 1000)}`)
      : []),
    ...(run.retry ? row('Retrying', `${run.retry.step} attempt ${run.retry.failed_attempt}: ${run.retry.reason}`) : []),
  );
}

function commits(run: Run): HTMLElement {
  const commit = (label: string, sha: string | null) =>
    h('li', {}, `${label}: `, sha ? h('code', { class: 'commit' }, sha) : 'not pushed yet');
  const request = (m: Run['merge_requests'][number]) =>
    h(
      'li',
      { class: 'merge-request', 'data-state': m.state },
      // The address as text, not a link: the console links only to its own routes (dom.ts).
      `${m.pass === 'infra' ? 'Infrastructure' : 'Full'} pass merge request #${m.number}: ${m.state}${m.edited ? ' (edited after the run pushed it)' : ''} `,
      h('code', { class: 'merge-request-url' }, m.url),
    );
  return h(
    'ul',
    { id: 'commits' },
    commit('Infrastructure pass', run.infra_commit),
    commit('Full pass', run.full_commit),
    ...(run.merge_requests ?? []).map(request),
  );
}

function credentialPlan(items: CredentialPlanItem[]): HTMLElement {
  if (items.length === 0) return h('p', {}, 'The reference holds no Secret keys (or could not be read).');
  const byClass = new Map<CredentialPlanItem['class'], CredentialPlanItem[]>();
  for (const i of items) byClass.set(i.class, [...(byClass.get(i.class) ?? []), i]);
  return h(
    'div',
    { id: 'plan' },
    ...[...byClass].map(([kind, keys]) =>
      h(
        'section',
        { class: 'plan-class', 'data-class': kind },
        h('h3', {}, `${kind} (${keys.length})`),
        h('p', { class: 'hint' }, CLASS_MEANING[kind]),
        h('ul', {}, ...keys.map((k) => h('li', {}, h('code', {}, `${k.namespace}/${k.name}`), ` key ${k.key}`))),
      ),
    ),
  );
}

/**
 * What was refused, failed or skipped, each once. Failures come from the events; the log repeats each of them
 * (a step's ERROR line, the run's closing `[run]` line), so from the log only the steps' warnings are taken,
 * which no event carries. A StepFailed that will not be retried is the same failure as the ScaffoldFailed after it.
 */
function problems(events: RunEvent[], log: string): HTMLElement {
  const fromEvents = events
    .filter((e) =>
      e.type === 'StepFailed'
        ? e.data.will_retry === true
        : ['ScaffoldFailed', 'ScaffoldCancelled', 'ScaffoldCancelRequested'].includes(e.type),
    )
    .map((e) => `${e.type}: ${eventSummary(e)}`);
  const fromLog = log.split('\n').filter((l) => /^\S+ WARN \[(?!run\])/.test(l));
  const all = [...fromEvents, ...fromLog];
  if (all.length === 0) return h('p', { id: 'problems' }, 'Nothing was refused or skipped.');
  return h('ul', { id: 'problems' }, ...all.map((p) => h('li', {}, p)));
}

/** The timeline: each event with its time and the time since the one before. */
class Timeline {
  readonly list = h('ol', { id: 'timeline', 'aria-live': 'polite' });
  readonly events: RunEvent[] = [];

  add(e: RunEvent): boolean {
    const last = this.events.at(-1);
    if (last && e.seq <= last.seq) return false;
    const gap = last ? `+${span(Date.parse(e.time) - Date.parse(last.time))}` : 'start';
    this.events.push(e);
    append(
      this.list,
      h(
        'li',
        { 'data-type': e.type, 'data-seq': String(e.seq) },
        h('time', { datetime: e.time, title: e.time }, e.time.slice(11, 23)),
        h('span', { class: 'gap' }, gap),
        h('strong', { class: 'type' }, e.type),
        h('span', { class: 'summary' }, eventSummary(e)),
      ),
    );
    return true;
  }

  get ended(): boolean {
    return TERMINAL_EVENTS.includes(this.events.at(-1)?.type ?? '');
  }
}

/**
 * A run's page: its status and details, the timeline as it arrives (followed over the SSE route,
 * resumed with the last sequence after the server's time limit or a broken connection), its log,
 * commits, credential plan by class and what was refused or skipped. Stops following when `signal`
 * aborts (the reader left the page).
 */
export async function runView(root: HTMLElement, api: ApiClient, id: string, signal: AbortSignal) {
  let run: Run;
  try {
    run = await api.run(id);
  } catch (e) {
    const notFound = e instanceof ApiFailure && e.status === 404;
    show(root, h('h1', {}, 'Run'), notFound ? h('p', { id: 'not-found' }, 'Run not found.') : errorBox(e));
    return;
  }
  const timeline = new Timeline();
  const header = h('div', { id: 'run-details' });
  const commitsBox = h('div', {});
  const problemsBox = h('div', {});
  const planBox = h('div', {}, 'Loading…');
  const logBox = h('pre', { id: 'log', class: 'log' });
  const live = h('p', { id: 'live', class: 'live', role: 'status' }, 'connecting…');
  show(
    root,
    h('h1', {}, `Run of ${run.cluster_name}`, h('span', { class: 'run-id' }, run.id)),
    header,
    h('h2', {}, 'Timeline'),
    live,
    timeline.list,
    h('h2', {}, 'Commits'),
    commitsBox,
    h('h2', {}, 'Refused or skipped'),
    problemsBox,
    h('h2', {}, 'Credential plan'),
    planBox,
    h('h2', {}, 'Log'),
    logBox,
  );

  const redraw = (r: Run, log: string) => {
    show(header, details(r));
    show(commitsBox, commits(r));
    show(problemsBox, problems(timeline.events, log));
    logBox.textContent = log || '(empty)';
  };
  let lateAnswers = 0;
  const refresher: () => void = coalesced(async () => {
    const [r, log] = await Promise.all([api.run(id), api.runLog(id)]);
    if (signal.aborted) return;
    redraw(r, log);
    // The run comes from the read-model, which follows the stream: right after the terminal event it
    // may still answer the run as it was a moment before. Ask again until it has caught up.
    if (timeline.ended && !FINISHED.includes(r.status) && lateAnswers++ < MAX_LATE_ANSWERS) {
      await pause(RECONNECT_MS / 2, signal);
      refresher();
    }
  });
  redraw(run, '');
  api
    .credentialPlan(id)
    .then((p) => show(planBox, credentialPlan(p.items)))
    .catch((e) => show(planBox, errorBox(e)));

  await followLive(api, id, timeline, live, refresher, signal);
}

/** Follows the run until its terminal event, reconnecting after the server's time limit or a broken connection. */
async function followLive(
  api: ApiClient,
  id: string,
  timeline: Timeline,
  live: HTMLElement,
  refresh: () => void,
  signal: AbortSignal,
) {
  refresh();
  while (!signal.aborted && !timeline.ended) {
    try {
      live.textContent = 'live';
      live.dataset.state = 'live';
      await api.follow(
        id,
        timeline.events.at(-1)?.seq ?? null,
        (e) => {
          if (timeline.add(e)) refresh();
        },
        signal,
      );
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiFailure && e.status !== 429) {
        live.textContent = `live updates stopped: ${problemText(e)}`;
        live.dataset.state = 'stopped';
        return;
      }
      const waitMs = e instanceof ApiFailure && e.retryAfter ? e.retryAfter * 1000 : RECONNECT_MS;
      live.textContent = `reconnecting in ${span(waitMs)} (${problemText(e)})`;
      live.dataset.state = 'reconnecting';
      await pause(waitMs, signal);
    }
  }
  if (timeline.ended) {
    live.textContent = 'run ended';
    live.dataset.state = 'ended';
  }
  refresh();
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Runs `work` now, or once more after the current run when asked again meanwhile (never two at a time). */
function coalesced(work: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = async () => {
    running = true;
    do {
      again = false;
      await work().catch(() => undefined);
    } while (again);
    running = false;
  };
  return () => {
    if (running) again = true;
    else void run();
  };
}
