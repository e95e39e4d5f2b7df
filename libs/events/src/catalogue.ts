/**
 * The one place that defines every event of a scaffold run: its type, schema version and data.
 * Events carry references, names and fingerprints only: never a credential or certificate body.
 */
export const SCHEMA_VERSION = 1;

export type Step = 'infra-pass' | 'sealed-secrets-wait' | 'cert-fetch' | 'full-pass';
export const STEPS: readonly Step[] = ['infra-pass', 'sealed-secrets-wait', 'cert-fetch', 'full-pass'];

export type ScaffoldTarget =
  | { kind: 'sealing_cert'; fingerprint_sha256: string; not_after: string }
  | { kind: 'kubeconfig_secret'; namespace: string; name: string; key: string };

export interface ScaffoldRequestedData {
  cluster_name: string;
  domain: string;
  region: string;
  acme_email: string;
  repo_url: string;
  branch: string;
  target: ScaffoldTarget;
  requested_by: string;
}

export interface EventDataByType {
  ScaffoldRequested: ScaffoldRequestedData;
  InfraPushed: { commit: string; files_changed: number };
  SealedSecretsReady: { source: 'given_certificate' | 'cluster'; controller?: { namespace: string; name: string } };
  CertFetched: { fingerprint_sha256: string; not_after: string };
  FullPushed: { commit: string; objects_sealed: number };
  ScaffoldSucceeded: { infra_commit: string; full_commit: string };
  StepFailed: { step: Step; attempt: number; reason: string; will_retry: boolean };
  ScaffoldFailed: { step: Step; reason: string };
  ScaffoldCancelRequested: { requested_by: string };
  ScaffoldCancelled: { step: Step | null };
}

export type EventType = keyof EventDataByType;
export const EVENT_TYPES = [
  'ScaffoldRequested',
  'InfraPushed',
  'SealedSecretsReady',
  'CertFetched',
  'FullPushed',
  'ScaffoldSucceeded',
  'StepFailed',
  'ScaffoldFailed',
  'ScaffoldCancelRequested',
  'ScaffoldCancelled',
] as const satisfies readonly EventType[];

export const TERMINAL_EVENTS: readonly EventType[] = ['ScaffoldSucceeded', 'ScaffoldFailed', 'ScaffoldCancelled'];

/** What the decider produces: an event without identity or time (the caller stamps those). */
export type EventDraft = { [T in EventType]: { type: T; data: EventDataByType[T] } }[EventType];

/** The JSON envelope every event is stored in. */
export type ScaffoldEvent = EventDraft & {
  id: string;
  schema_version: number;
  run_id: string;
  time: string;
  causation_id: string | null;
};

/** An event as read back from the stream, with its stream sequence. */
export type StoredEvent = ScaffoldEvent & { seq: number };

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

export function stamp(draft: EventDraft, runId: string, id: string, time: Date, causationId: string | null): ScaffoldEvent {
  return { ...draft, id, schema_version: SCHEMA_VERSION, run_id: runId, time: time.toISOString(), causation_id: causationId } as ScaffoldEvent;
}

/** Parses a stored envelope, refusing anything that is not a known event. */
export function parseEvent(json: string, seq: number): StoredEvent {
  const e = JSON.parse(json);
  if (!e || !isEventType(e.type) || typeof e.run_id !== 'string' || typeof e.id !== 'string') throw new Error(`stream message ${seq} is not a scaffold event`);
  return { ...e, seq };
}
