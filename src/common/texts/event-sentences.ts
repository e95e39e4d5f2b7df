/**
 * What each event of a run says, in one line: the one source of the sentences scaffolderctl prints
 * (src/ctl/run-text.ts) and the console shows (src/console/ui). Compiled twice, by the service's build as a
 * CommonJS module and by the console's (src/console/ui/tsconfig.json) as a browser ES module into dist/console,
 * so it imports types only. Exhaustive over the event catalogue: a new event type does not compile without its
 * sentence. Steps are said by the names the run plans give them (the events carry them), so a plan's new step needs
 * no word here.
 */
import type { EventDataByType, EventType } from '#libs/events/catalogue';

/** An event's data as the API answers it: fields written before they existed may be missing. */
type Answered<D> = { readonly [K in keyof D]?: D[K] | null };

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

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

/** A commit as both show it: its first 12 hex digits. */
export const shortCommit = (commit: unknown): string => (typeof commit === 'string' ? commit.slice(0, 12) : '—');

/** Every event type's sentence: the compiler refuses a type without one, and a key that is none. */
export const EVENT_SENTENCES: { readonly [T in EventType]: (data: Answered<EventDataByType[T]>) => string } = {
  ScaffoldRequested: (d) =>
    `cluster ${str(d.cluster_name)} (${str(d.domain)}, ${str(d.region)}) into ${str(d.repo_url)} ${str(d.branch)}, requested by ${str(d.requested_by)}`,
  InfraPushed: (d) =>
    d.unchanged
      ? `infrastructure already on the branch: nothing pushed (at ${shortCommit(d.commit)})`
      : `infra pass pushed ${shortCommit(d.commit)} (${str(d.files_changed)} files)`,
  // The controller found Available, or none checked: a certificate given in the request skips the wait.
  SealedSecretsReady: (d) =>
    d.source === 'cluster' && d.controller
      ? `sealed-secrets controller ${str(d.controller.namespace)}/${str(d.controller.name)} is ready`
      : 'no controller checked: the request gave the sealing certificate',
  CertFetched: (d) =>
    `sealing certificate ${str(d.fingerprint_sha256).slice(0, 16)}… fetched (valid until ${str(d.not_after)})`,
  FullPushed: (d) =>
    d.unchanged
      ? `full tree already on the branch: nothing pushed (at ${shortCommit(d.commit)})`
      : `full pass pushed ${shortCommit(d.commit)} (${str(d.objects_sealed)} objects sealed)`,
  StepCompleted: (d) => `${str(d.step)} done: ${str(d.summary)}`,
  ScaffoldSucceeded: (d) => `succeeded (infra ${shortCommit(d.infra_commit)}, full ${shortCommit(d.full_commit)})`,
  StepFailed: (d) =>
    `${str(d.step)} failed (attempt ${str(d.attempt)}): ${str(d.reason)}${d.will_retry ? '; will retry' : ''}`,
  ScaffoldFailed: (d) => `failed at ${str(d.step)}: ${str(d.reason)}`,
  ScaffoldCancelRequested: (d) => `cancel requested by ${str(d.requested_by)}`,
  ScaffoldCancelled: (d) => `cancelled${d.step ? ` at ${str(d.step)}` : ''}`,
  StepProgress: (d) =>
    `${str(d.step)}: waited ${span(Number(d.waited_ms))} of ${span(Number(d.deadline_ms))}${d.seen ? ` (${str(d.seen)})` : ''}`,
  StepRedriveRequested: (d) => `${str(d.step)} re-driven by ${str(d.requested_by)}`,
  MergeRequestOpened: (d) =>
    d.request
      ? `${str(d.pass)} pass pushed ${shortCommit(d.commit)} to ${str(d.request.head)}; merge request #${str(d.request.number)} open: ${str(d.request.url)}`
      : `${str(d.pass)} pass already on the branch: no merge request needed (at ${shortCommit(d.commit)})`,
  MergeRequestMerged: (d) =>
    d.request
      ? `merge request #${str(d.request.number)} (${str(d.pass)} pass) merged as ${shortCommit(d.merge_commit)}${d.edited ? ', with changes pushed to it after the run' : ''}`
      : `${str(d.pass)} pass: nothing to merge (at ${shortCommit(d.merge_commit)})`,
  MergeRequestClosed: (d) =>
    `merge request #${str(d.request?.number)} (${str(d.pass)} pass) closed without merging: ${str(d.reason)}`,
};

/** What one event says, in a line ('' for a type this build does not know: a newer service's). */
export function eventSentence(type: string, data: unknown): string {
  if (!Object.hasOwn(EVENT_SENTENCES, type)) return '';
  const say = EVENT_SENTENCES[type as EventType] as (d: Record<string, unknown>) => string;
  return say(typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {});
}
