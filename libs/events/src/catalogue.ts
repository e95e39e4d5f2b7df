/**
 * The one place that defines every event of a scaffold run: its type, schema version and data.
 * Events carry references, names and fingerprints only: never a credential or certificate body.
 */
import { checkEventData, CURRENT_VERSION, upcastData } from './schemas';

export type Step = 'infra-pass' | 'sealed-secrets-wait' | 'cert-fetch' | 'full-pass';
export const STEPS: readonly Step[] = ['infra-pass', 'sealed-secrets-wait', 'cert-fetch', 'full-pass'];

export type ScaffoldTarget =
  | { kind: 'sealing_cert'; fingerprint_sha256: string; not_after: string }
  | { kind: 'kubeconfig_secret'; namespace: string; name: string; key: string }
  /** The SOPS backend: the cluster's age public keys (no controller to wait for, no certificate). */
  | { kind: 'age_recipients'; recipients: string[] };

export interface ScaffoldRequestedData {
  cluster_name: string;
  domain: string;
  region: string;
  acme_email: string;
  repo_url: string;
  branch: string;
  target: ScaffoldTarget;
  requested_by: string;
  /** Cluster-vars references: values for the new cluster's cluster-vars (configuration, never credentials). */
  cluster_vars?: Record<string, string>;
  /** Where the supplied credentials are (a management-cluster Secret, read at use): a reference, never a value. */
  credentials_secret?: { namespace: string; name: string };
  /** Flux-example references: the new cluster's host for each reference host outside the reference domain. */
  host_map?: Record<string, string>;
  /** The reference environment's domain, when the request names it. */
  reference_domain?: string;
  /** The URL the new cluster's Flux GitRepository fetches from, when it differs from repo_url (never with credentials). */
  flux_url?: string;
  /** The key owning the cluster folder when it is not requested_by: an admin's run for a folder another key scaffolded first. */
  cluster_owner?: string;
}

export interface EventDataByType {
  ScaffoldRequested: ScaffoldRequestedData;
  /** unchanged: the branch already held this tree, so nothing was committed (commit is the branch head). */
  InfraPushed: { commit: string; files_changed: number; unchanged?: boolean };
  SealedSecretsReady: { source: 'given_certificate' | 'cluster'; controller: { namespace: string; name: string } | null };
  CertFetched: { fingerprint_sha256: string; not_after: string };
  FullPushed: { commit: string; objects_sealed: number; unchanged?: boolean };
  ScaffoldSucceeded: { infra_commit: string; full_commit: string };
  StepFailed: { step: Step; attempt: number; reason: string; will_retry: boolean };
  ScaffoldFailed: { step: Step; reason: string };
  ScaffoldCancelRequested: { requested_by: string };
  ScaffoldCancelled: { step: Step | null };
  /** A long step's progress (the readiness wait): appended when what it sees changes, or every minute. */
  StepProgress: { step: Step; waited_ms: number; deadline_ms: number; seen: string };
  /** An operator asks for the current step to run again (after a lost message or a dead consumer). */
  StepRedriveRequested: { step: Step; requested_by: string };
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
  'StepProgress',
  'StepRedriveRequested',
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

/** Stamps a draft with identity, time and the current schema version; refuses data that breaks its schema. */
export function stamp(draft: EventDraft, runId: string, id: string, time: Date, causationId: string | null): ScaffoldEvent {
  const problem = checkEventData(draft.type, draft.data);
  if (problem) throw new Error(`refusing to append an invalid event: ${problem}`);
  return { ...draft, id, schema_version: CURRENT_VERSION[draft.type], run_id: runId, time: time.toISOString(), causation_id: causationId } as ScaffoldEvent;
}

/** Parses a stored envelope of any version, upcasts it to the current one and validates it. */
export function parseEvent(json: string, seq: number, subject?: string): StoredEvent {
  let e: any;
  try {
    e = JSON.parse(json);
  } catch {
    throw new Error(`stream message ${seq} is not JSON`);
  }
  if (!e || !isEventType(e.type) || typeof e.run_id !== 'string' || typeof e.id !== 'string') throw new Error(`stream message ${seq} is not a scaffold event`);
  // An event is stored on its run's subject; one that names another run is not this run's.
  if (subject !== undefined && subject !== `scaffold.run.${e.run_id}`) throw new Error(`stream message ${seq} on ${subject} names run ${e.run_id}`);
  const version = Number.isInteger(e.schema_version) ? e.schema_version : 1;
  const data = upcastData(e.type, version, e.data);
  const problem = checkEventData(e.type, data);
  if (problem) throw new Error(`stream message ${seq}: ${problem}`);
  return { ...e, data, schema_version: CURRENT_VERSION[e.type as EventType], seq };
}

/** A message on an event subject that is not a valid event of that run: skipped by every reader and reported. */
export interface InvalidStreamMessage {
  seq: number;
  subject: string;
  reason: string;
}

/** parseEvent for readers that must go on past a bad message: the event, or why the message is none. */
export function tryParseEvent(json: string, seq: number, subject: string): { event: StoredEvent } | { invalid: InvalidStreamMessage } {
  try {
    return { event: parseEvent(json, seq, subject) };
  } catch (e) {
    return { invalid: { seq, subject, reason: (e as Error).message } };
  }
}
