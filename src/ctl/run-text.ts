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
  const rows = runs.map((r) => [r.id, r.status, r.step ?? '-', r.cluster_name, age(r.created_at, now)]);
  const head = ['ID', 'STATUS', 'STEP', 'CLUSTER', 'AGE'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  return [head, ...rows].map((r) =>
    r
      .map((c, i) => String(c).padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}
