import type { ScaffoldEvent, StoredEvent } from '#libs/events';

/** Another writer appended to the run first: re-read, decide again. */
export class ConcurrencyConflict extends Error {
  constructor(runId: string) {
    super(`run ${runId} changed while deciding`);
  }
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
 * It knows events, not what they mean: the aggregate's rules come in through `handleCommand`.
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

/** A read of a run that does not yet include an event the caller has already seen; retrying helps. */
export class StaleRead extends Error {
  constructor(runId: string, seen: number, read: number) {
    super(
      `run ${runId} was read up to sequence ${read}, behind the event ${seen} already delivered; reading again later`,
    );
  }
}
