import { randomUUID } from 'node:crypto';
import type { EventDraft, StoredEvent } from '#libs/events';
import { stamp } from '#libs/events';
import { ConcurrencyConflict, EventStore, StaleRead } from './event-store';

/**
 * An aggregate's rules as a whole (Emmett's decider): `evolve` folds its history from `initialState`,
 * `decide` turns a command and the state into new events (none: nothing to do; a throw: refused).
 * Pure, no I/O, no clock, no ids; the decider lives with its domain, the store only runs it.
 */
export interface Decider<S, C, E extends EventDraft = EventDraft> {
  initialState: S;
  evolve(state: S, event: StoredEvent): S;
  decide(command: C, state: S): E[];
}

export interface DecisionResult<S> {
  state: S;
  appended: StoredEvent[];
  /** The run's events the decision was made on (before what it appended). */
  history: StoredEvent[];
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

const MAX_DECISION_ATTEMPTS = 10;

/**
 * Load, fold with the decider, decide the command, append; on a concurrency conflict load and decide
 * again. The same loop serves every EventStore implementation and every decider.
 */
export async function handleCommand<S, C>(
  store: EventStore,
  decider: Decider<S, C>,
  runId: string,
  command: C,
  opts: DecideOptions = {},
): Promise<DecisionResult<S>> {
  for (let attempt = 0; attempt < MAX_DECISION_ATTEMPTS; attempt++) {
    const { events, lastSeq } = await store.readRun(runId);
    if (opts.seenSeq !== undefined && lastSeq < opts.seenSeq) throw new StaleRead(runId, opts.seenSeq, lastSeq);
    const state = events.reduce(decider.evolve, decider.initialState);
    const drafts = decider.decide(command, state);
    if (drafts.length === 0) return { state, appended: [], history: events };
    const time = (opts.now ?? (() => new Date()))();
    const stamped = drafts.map((d, i) =>
      stamp(d, runId, opts.idFor?.(d, i) ?? randomUUID(), time, opts.causationId ?? null),
    );
    try {
      const appended = await store.append(runId, stamped, lastSeq);
      return { state: appended.reduce(decider.evolve, state), appended, history: events };
    } catch (e) {
      if (!(e instanceof ConcurrencyConflict)) throw e;
    }
  }
  throw new ConcurrencyConflict(runId);
}
