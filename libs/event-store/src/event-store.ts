import { randomUUID } from 'node:crypto';
import type { EventDraft, ScaffoldEvent, StoredEvent } from '../../events/src';
import { stamp } from '../../events/src';

/** Another writer appended to the run first: re-read, decide again. */
export class ConcurrencyConflict extends Error {
  constructor(runId: string) {
    super(`run ${runId} changed while deciding`);
  }
}

/** The shape of an aggregate's rules as the store needs them to fold a history; the decider lives with its domain. */
export interface Decider<S> {
  initialState: S;
  evolve(state: S, event: StoredEvent): S;
}

export interface DecisionResult<S> {
  state: S;
  appended: StoredEvent[];
  /** The run's events the decision was made on (before what it appended). */
  history: StoredEvent[];
}

export interface RangeQuery {
  fromSeq?: number;
  since?: Date;
  limit: number;
  types?: string[];
  runId?: string;
}

export interface FollowOptions {
  runId?: string;
  afterSeq?: number;
  onEvent: (e: StoredEvent) => void | Promise<void>;
  until?: (e: StoredEvent) => boolean;
  signal?: AbortSignal;
}

/** A stretch of the whole log: from a sequence up to another (default: the last at the start), read `batchSize` (1000) at a time. */
export interface ScanRange {
  fromSeq: number;
  untilSeq?: number;
  batchSize?: number;
}

/**
 * The event log: one ordered history per run with optimistic concurrency on the run's last sequence.
 * It knows events, not what they mean: the aggregate's rules come in through `decideAndAppend`.
 */
export interface EventStore {
  /** The run's events in order, and the stream sequence of the last one (0 for a run that does not exist). */
  readRun(runId: string): Promise<{ events: StoredEvent[]; lastSeq: number }>;
  /** Appends after `expectedLastSeq` or throws ConcurrencyConflict; an event id seen before is a conflict too. */
  append(runId: string, events: ScaffoldEvent[], expectedLastSeq: number): Promise<StoredEvent[]>;
  /** Events across all runs (or one) from a sequence or a time, oldest first; `nextSeq` continues the range. */
  readRange(query: RangeQuery): Promise<{ events: StoredEvent[]; nextSeq: number | null }>;
  /**
   * Every event from `fromSeq` up to `untilSeq` (default: the last at the call), oldest first, handed
   * over in batches as they are read through one reader (a rebuild or replay of the whole log).
   * Returns how many events were handed over.
   */
  scan(range: ScanRange, onBatch: (events: StoredEvent[]) => Promise<void>): Promise<number>;
  /** The last sequence of the whole log (0 when empty). */
  lastSeq(): Promise<number>;
  /** Follows events live from `afterSeq`, resolving after `until` says so or when `signal` aborts. */
  follow(opts: FollowOptions): Promise<void>;
}

export interface DecideOptions {
  causationId?: string | null;
  now?: () => Date;
  /** Pins an event id (idempotent requests); random otherwise. */
  idFor?: (draft: EventDraft, index: number) => string;
  /**
   * The caller has seen this sequence of the run (the event it reacts to): a read that ends before it
   * is stale (a stream leader just elected can answer from behind), so it is refused, not decided on.
   */
  seenSeq?: number;
}

/** A read of a run that does not yet include an event the caller has already seen; retrying helps. */
export class StaleRead extends Error {
  constructor(runId: string, seen: number, read: number) {
    super(`run ${runId} was read up to sequence ${read}, behind the event ${seen} already delivered; reading again later`);
  }
}

const MAX_DECISION_ATTEMPTS = 10;

/**
 * Load, fold with the given decider, decide, append; on a concurrency conflict load and decide again.
 * `decide` must be pure. The same loop serves every EventStore implementation.
 */
export async function decideAndAppend<S>(store: EventStore, runId: string, decider: Decider<S>, decide: (state: S) => EventDraft[], opts: DecideOptions = {}): Promise<DecisionResult<S>> {
  for (let attempt = 0; attempt < MAX_DECISION_ATTEMPTS; attempt++) {
    const { events, lastSeq } = await store.readRun(runId);
    if (opts.seenSeq !== undefined && lastSeq < opts.seenSeq) throw new StaleRead(runId, opts.seenSeq, lastSeq);
    const state = events.reduce(decider.evolve, decider.initialState);
    const drafts = decide(state);
    if (drafts.length === 0) return { state, appended: [], history: events };
    const time = (opts.now ?? (() => new Date()))();
    const stamped = drafts.map((d, i) => stamp(d, runId, opts.idFor?.(d, i) ?? randomUUID(), time, opts.causationId ?? null));
    try {
      const appended = await store.append(runId, stamped, lastSeq);
      return { state: appended.reduce(decider.evolve, state), appended, history: events };
    } catch (e) {
      if (!(e instanceof ConcurrencyConflict)) throw e;
    }
  }
  throw new ConcurrencyConflict(runId);
}
