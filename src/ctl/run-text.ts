/** Runs and their events in words, for a terminal (--json prints the service's own answers instead). */

const short = (commit: unknown) => (typeof commit === 'string' ? commit.slice(0, 12) : '-');
const seconds = (ms: unknown) => `${Math.round(Number(ms) / 1000)} s`;

/**
 * SealedSecretsReady in words: the controller that was found Available, or that none was checked (a
 * certificate given in the request skips the wait). The console says the same words (src/console/ui/format.ts;
 * test/console/event-sentences.spec.ts holds the two to them).
 */
function sealingReadyText(d: any): string {
  const controller = d.controller;
  return d.source === 'cluster' && controller
    ? `sealed-secrets controller ${controller.namespace}/${controller.name} is ready`
    : 'no controller checked: the request gave the sealing certificate';
}

/** What one event of a run says, in a line. */
export function eventText(type: string, d: any): string {
  switch (type) {
    case 'ScaffoldRequested':
      return `requested: ${d.cluster_name} (${d.domain}) into ${d.repo_url} ${d.branch}`;
    case 'InfraPushed':
      return d.unchanged
        ? `infrastructure already on the branch: nothing pushed (at ${short(d.commit)})`
        : `infra pass pushed ${short(d.commit)} (${d.files_changed} files)`;
    case 'SealedSecretsReady':
      return sealingReadyText(d);
    case 'CertFetched':
      return `sealing certificate fetched (valid until ${d.not_after})`;
    case 'FullPushed':
      return d.unchanged
        ? `full tree already on the branch: nothing pushed (at ${short(d.commit)})`
        : `full pass pushed ${short(d.commit)} (${d.objects_sealed} objects sealed)`;
    case 'StepCompleted':
      return `${d.step} done: ${d.summary}`;
    case 'ScaffoldSucceeded':
      return `succeeded (infra ${short(d.infra_commit)}, full ${short(d.full_commit)})`;
    case 'StepFailed':
      return `${d.step} failed (attempt ${d.attempt}): ${d.reason}${d.will_retry ? '; will retry' : ''}`;
    case 'ScaffoldFailed':
      return `failed at ${d.step}: ${d.reason}`;
    case 'ScaffoldCancelRequested':
      return `cancel requested by ${d.requested_by}`;
    case 'ScaffoldCancelled':
      return `cancelled${d.step ? ` at ${d.step}` : ''}`;
    case 'StepProgress':
      return `${d.step}: waited ${seconds(d.waited_ms)} of ${seconds(d.deadline_ms)}${d.seen ? ` (${d.seen})` : ''}`;
    case 'StepRedriveRequested':
      return `${d.step} re-driven by ${d.requested_by}`;
    default:
      return '';
  }
}

/** `10:00:03  InfraPushed           infra pass pushed 1a2b3c4d5e6f (14 files)` */
export function progressLine(e: { type: string; time?: string; data: unknown }): string {
  const time = typeof e.time === 'string' ? e.time.slice(11, 19) : '--:--:--';
  return `${time}  ${e.type.padEnd(24)}${eventText(e.type, e.data ?? {})}`.trimEnd();
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
