/**
 * Events as they are stored: a draft stamped into its envelope on the way in, an envelope of any
 * version upcast and validated on the way out.
 */
import { EventDraft, EventType, isEventType, ScaffoldEvent, StoredEvent } from './catalogue';
import { checkEventData, CURRENT_VERSION, upcastData } from './schemas';

/** Stamps a draft with identity, time and the current schema version; refuses data that breaks its schema. */
export function stamp(
  draft: EventDraft,
  runId: string,
  id: string,
  time: Date,
  causationId: string | null,
): ScaffoldEvent {
  const problem = checkEventData(draft.type, draft.data);
  if (problem) throw new Error(`refusing to append an invalid event: ${problem}`);
  return {
    ...draft,
    id,
    schema_version: CURRENT_VERSION[draft.type],
    run_id: runId,
    time: time.toISOString(),
    causation_id: causationId,
  } as ScaffoldEvent;
}

/** Parses a stored envelope of any version, upcasts it to the current one and validates it. */
export function parseEvent(json: string, seq: number, subject?: string): StoredEvent {
  let e: any;
  try {
    e = JSON.parse(json);
  } catch {
    throw new Error(`stream message ${seq} is not JSON`);
  }
  if (!e || !isEventType(e.type) || typeof e.run_id !== 'string' || typeof e.id !== 'string')
    throw new Error(`stream message ${seq} is not a scaffold event`);
  // An event is stored on its run's subject; one that names another run is not this run's.
  if (subject !== undefined && !isRunSubject(subject, e.run_id))
    throw new Error(`stream message ${seq} on ${subject} names run ${e.run_id}`);
  const version = Number.isInteger(e.schema_version) ? e.schema_version : 1;
  const data = upcastData(e.type, version, e.data);
  const problem = checkEventData(e.type, data);
  if (problem) throw new Error(`stream message ${seq}: ${problem}`);
  // The parsed object is this call's own: completed in place, not copied (a copy per event was a replay's largest
  // cost after JSON.parse). Same keys in the same order as a copy would have.
  e.data = data;
  e.schema_version = CURRENT_VERSION[e.type as EventType];
  e.seq = seq;
  return e;
}

const RUN_SUBJECT_PREFIX = 'scaffold.run.';

/** subject === `scaffold.run.${runId}`, without building that string for every event read. */
function isRunSubject(subject: string, runId: string): boolean {
  return (
    subject.length === RUN_SUBJECT_PREFIX.length + runId.length &&
    subject.startsWith(RUN_SUBJECT_PREFIX) &&
    subject.endsWith(runId)
  );
}

/** A message on an event subject that is not a valid event of that run: skipped by every reader and reported. */
export interface InvalidStreamMessage {
  seq: number;
  subject: string;
  reason: string;
}

/** parseEvent for readers that must go on past a bad message: the event, or why the message is none. */
export function tryParseEvent(
  json: string,
  seq: number,
  subject: string,
): { event: StoredEvent } | { invalid: InvalidStreamMessage } {
  try {
    return { event: parseEvent(json, seq, subject) };
  } catch (e) {
    return { invalid: { seq, subject, reason: (e as Error).message } };
  }
}
