/** Runs and their events in words, for a terminal (--json prints the service's own answers instead). */
import { eventSentence } from '../common/texts/event-sentences';

/**
 * `10:00:03  InfraPushed             infra pass pushed 1a2b3c4d5e6f (14 files)`: the event's sentence, the same the
 * console shows (src/common/texts/event-sentences.ts).
 */
export function progressLine(e: { type: string; time?: string; data: unknown }): string {
  const time = typeof e.time === 'string' ? e.time.slice(11, 19) : '--:--:--';
  return `${time}  ${e.type.padEnd(24)}${eventSentence(e.type, e.data)}`.trimEnd();
}

/** A run's fields, a line each (the answer of GET /api/v1/scaffolds/{id}). */
export function runText(run: any): string {
  const fields: Array<[string, unknown]> = [
    ['id', run.id],
    ['status', run.status],
    ['step', run.step],
    ['message', run.message],
    ['cluster', `${run.cluster_name} (${run.domain}, ${run.region})`],
    ['repository', `${run.repo_url} ${run.branch} ${run.gitops_path ?? ''}`.trim()],
    ['infra commit', run.infra_commit],
    ['full commit', run.full_commit],
    ...(run.merge_requests ?? []).map((m: any): [string, unknown] => [
      `${m.pass} request`,
      `#${m.number} ${m.state}${m.edited ? ' (edited after the run pushed it)' : ''} ${m.url}`,
    ]),
    ['retry', run.retry ? `${run.retry.step} attempt ${run.retry.failed_attempt} failed: ${run.retry.reason}` : null],
    ['progress', run.progress ? `waited ${run.progress.waited_seconds} s of ${run.progress.deadline_seconds} s` : null],
    ['created', run.created_at],
    ['updated', run.updated_at],
    ['finished', run.finished_at],
  ];
  return fieldLines(fields);
}

/** Named fields, a line each; the empty ones left out. */
function fieldLines(fields: Array<[string, unknown]>): string {
  return fields
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${`${k}:`.padEnd(14)}${String(v)}`)
    .join('\n');
}

/** How long ago a time was, in the largest unit that fits (`42s`, `5m`, `3h`, `2d`). */
function age(time: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(time)) / 1000));
  return s < 120
    ? `${s}s`
    : s < 7200
      ? `${Math.round(s / 60)}m`
      : s < 172_800
        ? `${Math.round(s / 3600)}h`
        : `${Math.round(s / 86_400)}d`;
}

/** A table of runs, newest first, as the list answers them. */
export function runTable(runs: any[], now = Date.now()): string[] {
  return table(
    ['ID', 'STATUS', 'STEP', 'CLUSTER', 'AGE'],
    runs.map((r) => [r.id, r.status, r.step ?? '-', r.cluster_name, age(r.created_at, now)]),
  );
}

/** Columns padded to their widest cell, two spaces apart. */
function table(head: string[], rows: unknown[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  return [head, ...rows].map((r) =>
    r
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

/** How far an environment's reference commit is behind (`-` when unknown). */
const behind = (e: any) => (e.commits_behind === null ? '-' : String(e.commits_behind));
const short = (commit: string | null) => (commit ? commit.slice(0, 12) : '-');

/** A table of environments, as the list answers them. */
export function environmentTable(environments: any[]): string[] {
  return table(
    ['ID', 'CLUSTER', 'STATUS', 'REFERENCE', 'BEHIND', 'REPOSITORY'],
    environments.map((e) => [
      e.id,
      e.cluster_name,
      e.status,
      short(e.reference_commit),
      behind(e),
      `${e.repo_url} ${e.branch}`,
    ]),
  );
}

/** An environment's fields, a line each (the answer of GET /api/v1/environments/{id}). */
export function environmentText(e: any): string {
  const fields: Array<[string, unknown]> = [
    ['id', e.id],
    ['status', e.status],
    ['cluster', `${e.cluster_name} (${e.domain}, ${e.region})`],
    ['repository', `${e.repo_url} ${e.branch} ${e.gitops_path}`],
    ['owner', e.owner],
    ['reference', `${e.reference_commit ?? 'unknown'}${e.reference_dirty ? ' (with uncommitted changes)' : ''}`],
    ['newest', e.reference_newest],
    ['behind', e.commits_behind === null ? null : `${e.commits_behind} commits`],
    ['runs', `${e.runs}, the last ${e.last_run.id} ${e.last_run.status}`],
    ['infra commit', e.infra_commit],
    ['full commit', e.full_commit],
    ['scaffolded', e.first_scaffolded_at],
    ['updated', e.updated_at],
  ];
  return fieldLines(fields);
}
