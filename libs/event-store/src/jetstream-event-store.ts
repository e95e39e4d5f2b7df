import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  AckPolicy,
  Consumer,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  JetStreamClient,
  JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { EventDraft, parseEvent, ScaffoldEvent, stamp, StoredEvent } from '../../events/src';
import { fold, RunState } from '../../run-decider/src';

export interface StreamNames {
  events: string;
  logs: string;
  inputs: string;
}

export const DEFAULT_STREAMS: StreamNames = { events: 'SCAFFOLD_EVENTS', logs: 'SCAFFOLD_LOGS', inputs: 'SCAFFOLD_INPUTS' };

/** All events of one run share one subject, so the server can check the run's last sequence. */
export const runSubject = (runId: string) => `scaffold.run.${runId}`;
export const logSubject = (runId: string) => `scaffold.logs.${runId}`;
export const inputSubject = (runId: string, name: string) => `scaffold.input.${runId}.${name}`;

/** Another writer appended to the run first: re-read, decide again. */
export class ConcurrencyConflict extends Error {
  constructor(runId: string) {
    super(`run ${runId} changed while deciding`);
  }
}

const WRONG_LAST_SEQUENCE = 10071;
const CONSUMER_NOT_FOUND = 10014;
const MIN_SERVER = [2, 9, 0];

export function serverAtLeast(version: string, min: number[] = MIN_SERVER): boolean {
  const parts = version.split(/[.-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    if (parts[i] !== min[i]) return parts[i] > min[i];
  }
  return true;
}

export interface DecisionResult {
  state: RunState;
  appended: StoredEvent[];
}

/**
 * The event log on JetStream: one stream, one subject per run, optimistic concurrency through
 * Nats-Expected-Last-Subject-Sequence and duplicate suppression through Nats-Msg-Id (both in 2.9).
 */
export class JetStreamEventStore {
  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly streams: StreamNames,
  ) {}

  static async open(nc: NatsConnection, streams: StreamNames = DEFAULT_STREAMS, replicas = 1): Promise<JetStreamEventStore> {
    const version = nc.info?.version ?? '0.0.0';
    if (!serverAtLeast(version)) throw new Error(`nats-server ${version} is too old: JetStream features of 2.9 are required`);
    const jsm = await jetstreamManager(nc);
    const store = new JetStreamEventStore(nc, jetstream(nc), jsm, streams);
    await store.ensureStream(streams.events, ['scaffold.run.>'], { duplicate_window: 5 * 60 * 1e9, num_replicas: replicas });
    await store.ensureStream(streams.logs, ['scaffold.logs.>'], { max_age: 30 * 24 * 3600 * 1e9, num_replicas: replicas });
    await store.ensureStream(streams.inputs, ['scaffold.input.>'], { max_age: 90 * 24 * 3600 * 1e9, max_msgs_per_subject: 1, num_replicas: replicas });
    return store;
  }

  private async ensureStream(name: string, subjects: string[], extra: Record<string, number>) {
    const config = { name, subjects, storage: StorageType.File, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old, ...extra };
    try {
      await this.jsm.streams.info(name);
      await this.jsm.streams.update(name, config);
    } catch (e) {
      if (e instanceof JetStreamApiError && e.code === 10059) await this.jsm.streams.add(config);
      else throw e;
    }
  }

  /** The run's events in order, and the stream sequence of the last one (0 for a run that does not exist). */
  async readRun(runId: string): Promise<{ events: StoredEvent[]; lastSeq: number }> {
    const last = await this.jsm.streams.getMessage(this.streams.events, { last_by_subj: runSubject(runId) });
    if (!last) return { events: [], lastSeq: 0 };
    const events = await this.readSubject(runSubject(runId), last.seq);
    return { events, lastSeq: last.seq };
  }

  /** Reads a subject from its first message up to `untilSeq` with an ordered consumer. */
  private async readSubject(subject: string, untilSeq: number): Promise<StoredEvent[]> {
    const messages = await this.readMessages(this.streams.events, subject, untilSeq);
    return messages.map((m) => parseEvent(m.data, m.seq));
  }

  /** Every message of one subject of a stream, oldest first, up to `untilSeq` (an ordered consumer, deleted after). */
  async readMessages(stream: string, subject: string, untilSeq: number): Promise<Array<{ seq: number; data: string }>> {
    const consumer = await this.js.consumers.get(stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
    const out: Array<{ seq: number; data: string }> = [];
    try {
      for (let done = false; !done; ) {
        const batch = await consumer.fetch({ max_messages: 256, expires: 2000 });
        let got = 0;
        for await (const m of batch) {
          got++;
          out.push({ seq: m.seq, data: m.string() });
          if (m.seq >= untilSeq || m.info.pending === 0) done = true;
          if (done) break;
        }
        if (got === 0) done = true;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return out;
  }

  /** The run's log lines as stored (already redacted), oldest first. */
  async readLog(runId: string): Promise<Array<{ time: string; level: string; step: string; msg: string }>> {
    const last = await this.jsm.streams.getMessage(this.streams.logs, { last_by_subj: logSubject(runId) });
    if (!last) return [];
    return (await this.readMessages(this.streams.logs, logSubject(runId), last.seq)).map((m) => JSON.parse(m.data));
  }

  /**
   * Events across all runs (or one run) from a sequence or a time, oldest first, at most `limit`
   * matching `types`; `nextSeq` continues after the last message looked at.
   */
  async readRange(opts: { fromSeq?: number; since?: Date; limit: number; types?: string[]; runId?: string }): Promise<{ events: StoredEvent[]; nextSeq: number | null }> {
    const info = await this.jsm.streams.info(this.streams.events);
    const lastSeq = info.state.last_seq;
    const start = opts.fromSeq ?? 1;
    if (lastSeq === 0 || start > lastSeq) return { events: [], nextSeq: null };
    const consumer = await this.js.consumers.get(this.streams.events, {
      filter_subjects: opts.runId ? runSubject(opts.runId) : 'scaffold.run.>',
      ...(opts.since ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: opts.since.toISOString() } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start }),
    });
    const events: StoredEvent[] = [];
    let lastLooked = 0;
    try {
      for (let done = false; !done; ) {
        const batch = await consumer.fetch({ max_messages: Math.min(1000, opts.limit * 2), expires: 2000 });
        let got = 0;
        for await (const m of batch) {
          got++;
          lastLooked = m.seq;
          const event = parseEvent(m.string(), m.seq);
          if (!opts.types || opts.types.includes(event.type)) events.push(event);
          if (events.length >= opts.limit || m.seq >= lastSeq || m.info.pending === 0) done = true;
          if (done) break;
        }
        if (got === 0) done = true;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return { events, nextSeq: lastLooked > 0 && lastLooked < lastSeq ? lastLooked + 1 : null };
  }

  /**
   * Follows one run live from `afterSeq`: calls `onEvent` for each event and resolves after the
   * terminal one, or when `signal` aborts.
   */
  async follow(opts: { runId?: string; afterSeq?: number; onEvent: (e: StoredEvent) => void | Promise<void>; until?: (e: StoredEvent) => boolean; signal?: AbortSignal }): Promise<void> {
    const consumer = await this.js.consumers.get(this.streams.events, {
      filter_subjects: opts.runId ? runSubject(opts.runId) : 'scaffold.run.>',
      ...(opts.afterSeq === undefined ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: opts.afterSeq + 1 }),
    });
    const messages = await consumer.consume({ max_messages: 256 });
    const stop = () => void messages.close().catch(() => undefined);
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      if (opts.signal?.aborted) return;
      for await (const m of messages) {
        const event = parseEvent(m.string(), m.seq);
        await opts.onEvent(event);
        if (opts.until?.(event)) break;
      }
    } finally {
      opts.signal?.removeEventListener('abort', stop);
      stop();
      await consumer.delete().catch(() => undefined);
    }
  }

  /** Appends events after `expectedLastSeq`, each with its id as Nats-Msg-Id. */
  async append(runId: string, events: ScaffoldEvent[], expectedLastSeq: number): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    let expected = expectedLastSeq;
    for (const event of events) {
      try {
        const ack = await this.js.publish(runSubject(runId), JSON.stringify(event), {
          msgID: event.id,
          expect: { lastSubjectSequence: expected },
        });
        if (ack.duplicate) throw new ConcurrencyConflict(runId);
        stored.push({ ...event, seq: ack.seq });
        expected = ack.seq;
      } catch (e) {
        if (e instanceof JetStreamApiError && e.code === WRONG_LAST_SEQUENCE) throw new ConcurrencyConflict(runId);
        throw e;
      }
    }
    return stored;
  }

  /**
   * Load, fold, decide, append; on a concurrency conflict re-load and decide again.
   * `decide` must be pure; `idFor` lets a caller pin an event id (for idempotent requests).
   */
  async decideAndAppend(
    runId: string,
    decide: (state: RunState) => EventDraft[],
    opts: { causationId?: string | null; now?: () => Date; idFor?: (draft: EventDraft, index: number) => string } = {},
  ): Promise<DecisionResult> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const { events, lastSeq } = await this.readRun(runId);
      const state = fold(events);
      const drafts = decide(state);
      if (drafts.length === 0) return { state, appended: [] };
      const time = (opts.now ?? (() => new Date()))();
      const stamped = drafts.map((d, i) => stamp(d, runId, opts.idFor?.(d, i) ?? randomUUID(), time, opts.causationId ?? null));
      try {
        const appended = await this.append(runId, stamped, lastSeq);
        return { state: fold([...events, ...appended]), appended };
      } catch (e) {
        if (!(e instanceof ConcurrencyConflict)) throw e;
      }
    }
    throw new ConcurrencyConflict(runId);
  }

  /**
   * A durable pull consumer with explicit ack on the events stream, created if missing and
   * updated (ack wait, max ack pending) if it exists, so every replica converges on one config.
   */
  async durableConsumer(name: string, opts: { filterSubject: string; ackWaitMs: number; maxAckPending: number }): Promise<Consumer> {
    const stream = this.streams.events;
    const ackWait = opts.ackWaitMs * 1_000_000;
    try {
      await this.jsm.consumers.info(stream, name);
      await this.jsm.consumers.update(stream, name, { ack_wait: ackWait, max_ack_pending: opts.maxAckPending });
    } catch (e) {
      if (!(e instanceof JetStreamApiError) || e.code !== CONSUMER_NOT_FOUND) throw e;
      await this.jsm.consumers
        .add(stream, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: ackWait,
          max_ack_pending: opts.maxAckPending,
          filter_subject: opts.filterSubject,
        })
        .catch(async (err) => {
          // Another replica created it between our info and add: use theirs.
          if (!(err instanceof JetStreamApiError)) throw err;
          await this.jsm.consumers.info(stream, name);
        });
    }
    return this.js.consumers.get(stream, name);
  }

  async deleteConsumer(name: string): Promise<void> {
    await this.jsm.consumers.delete(this.streams.events, name).catch(() => undefined);
  }

  /** Non-event material a later step needs (the given sealing certificate): public data only. */
  async putInput(runId: string, name: string, value: string): Promise<void> {
    await this.js.publish(inputSubject(runId, name), value);
  }

  async getInput(runId: string, name: string): Promise<string | null> {
    const m = await this.jsm.streams.getMessage(this.streams.inputs, { last_by_subj: inputSubject(runId, name) });
    return m ? m.string() : null;
  }
}
