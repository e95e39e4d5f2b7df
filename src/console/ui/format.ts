import type { RunEvent } from './api.js';

/** "4.2 s", "3 min 5 s", "2 h 10 min", "3 d 4 h": a span in the two largest units that matter. */
export function span(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours} h ${m % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** How long ago a time was, from now. */
export const age = (time: string | null, now = Date.now()): string =>
  time === null ? '—' : `${span(now - Date.parse(time))} ago`;

export const shortCommit = (commit: unknown): string => (typeof commit === 'string' ? commit.slice(0, 12) : '—');

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/**
 * SealedSecretsReady in words, as scaffolderctl says it (src/ctl/run-text.ts; test/console/event-sentences.spec.ts
 * holds the two to the same words): the controller found Available, or that none was checked.
 */
function sealingReady(d: Record<string, unknown>): string {
  const controller = d.controller as { namespace?: unknown; name?: unknown } | null | undefined;
  return d.source === 'cluster' && controller
    ? `sealed-secrets controller ${str(controller.namespace)}/${str(controller.name)} is ready`
    : 'no controller checked: the request gave the sealing certificate';
}

/** One line about an event's data (events hold names, references and fingerprints only: no credential). */
export function eventSummary(e: RunEvent): string {
  const d = e.data;
  switch (e.type) {
    case 'ScaffoldRequested': {
      const target = (d.target ?? {}) as Record<string, unknown>;
      return `cluster ${str(d.cluster_name)} (${str(d.domain)}, ${str(d.region)}) by ${str(d.requested_by)}; target ${str(target.kind)}`;
    }
    case 'InfraPushed':
      return d.unchanged
        ? `infrastructure already on the branch: nothing pushed (at ${shortCommit(d.commit)})`
        : `infrastructure commit ${shortCommit(d.commit)}, ${str(d.files_changed)} files changed`;
    case 'SealedSecretsReady':
      return sealingReady(d);
    case 'CertFetched':
      return `sealing certificate ${str(d.fingerprint_sha256).slice(0, 16)}…, valid until ${str(d.not_after)}`;
    case 'FullPushed':
      return d.unchanged
        ? `full tree already on the branch: nothing pushed (at ${shortCommit(d.commit)})`
        : `full commit ${shortCommit(d.commit)}, ${str(d.objects_sealed)} objects sealed`;
    case 'StepCompleted':
      return `${str(d.step)} done: ${str(d.summary)}`;
    case 'ScaffoldSucceeded':
      return `succeeded (infra ${shortCommit(d.infra_commit)}, full ${shortCommit(d.full_commit)})`;
    case 'StepFailed':
      return `${str(d.step)} attempt ${str(d.attempt)} failed${d.will_retry ? ', will retry' : ''}: ${str(d.reason)}`;
    case 'ScaffoldFailed':
      return `failed in ${str(d.step)}: ${str(d.reason)}`;
    case 'ScaffoldCancelRequested':
      return `cancel requested by ${str(d.requested_by)}`;
    case 'ScaffoldCancelled':
      return `cancelled${d.step ? ` at ${str(d.step)}` : ''}`;
    case 'StepProgress':
      return `${str(d.step)}: waited ${span(Number(d.waited_ms))} of ${span(Number(d.deadline_ms))}; ${str(d.seen)}`;
    case 'StepRedriveRequested':
      return `${str(d.step)} re-driven by ${str(d.requested_by)}`;
    default:
      return '';
  }
}
