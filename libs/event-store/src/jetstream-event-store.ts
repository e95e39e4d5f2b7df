import type { NatsConnection } from '@nats-io/nats-core';
import { DeliverPolicy, JetStreamApiError, JetStreamClient, JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { InvalidStreamMessage, ScaffoldEvent, StoredEvent, tryParseEvent } from '../../events/src';
import { ConcurrencyConflict, EventStore, FollowOptions, RangeQuery, ScanRange } from './event-store';
import { readSubject } from './jetstream-reads';
import { requireJetStreamServer } from './stream-admin';
import { ALL_RUNS, DEFAULT_STREAMS, runSubject, StreamNames } from './streams';

const WRONG_LAST_SEQUENCE = 10071;

/**
 * The event log on JetStream: one stream, one subject per run, optimistic concurrency through
 * Nats-Expected-Last-Subject-Sequence and duplicate suppression through Nats-Msg-Id (both in 2.9).
 * Opening it changes nothing on the server: streams are StreamAdmin's.
 */
/** Events a whole-log scan fetches at a time. */
const SCAN_BATCH = 1000;

export class JetStreamEventStore implements EventStore {
  /**
   * Told of every message on an event subject that is not a valid event of its run (a client with
   * publish rights wrote it): readers skip it instead of failing; the service logs and counts it.
   */
  onInvalid: (message: InvalidStreamMessage) => void = () => undefined;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly streams: StreamNames,
  ) {}

  static async open(nc: NatsConnection, streams: StreamNames = DEFAULT_STREAMS): Promise<JetStreamEventStore> {
    requireJetStreamServer(nc);
    return new JetStreamEventStore(nc, jetstream(nc), await jetstreamManager(nc), streams);
  }

  async readRun(runId: string): Promise<{ events: StoredEvent[]; lastSeq: number }> {
    const last = await this.jsm.streams.getMessage(this.streams.events, { last_by_subj: runSubject(runId) });
    if (!last) return { events: [], lastSeq: 0 };
    const messages = await readSubject(this.js, this.streams.events, runSubject(runId), last.seq);
    return { events: messages.flatMap((m) => this.parsed(m.data, m.seq, m.subject)), lastSeq: last.seq };
  }

  /** The message as an event, or nothing (reported) when it is not one. */
  private parsed(data: string, seq: number, subject: string): StoredEvent[] {
    const result = tryParseEvent(data, seq, subject);
    if ('event' in result) return [result.event];
    this.onInvalid(result.invalid);
    return [];
  }

  async lastSeq(): Promise<number> {
    return (await this.jsm.streams.info(this.streams.events)).state.last_seq;
  }

  async readRange(opts: RangeQuery): Promise<{ events: StoredEvent[]; nextSeq: number | null }> {
    const lastSeq = await this.lastSeq();
    const start = opts.fromSeq ?? 1;
    if (lastSeq === 0 || start > lastSeq) return { events: [], nextSeq: null };
    const consumer = await this.js.consumers.get(this.streams.events, {
      filter_subjects: opts.runId ? runSubject(opts.runId) : ALL_RUNS,
      ...(opts.since ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: opts.since.toISOString() } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start }),
    });
    const events: StoredEvent[] = [];
    let lastLooked = 0;
    try {
      for (let done = false; !done;) {
        const batch = await consumer.fetch({ max_messages: Math.min(1000, opts.limit * 2), expires: 2000 });
        let got = 0;
        for await (const m of batch) {
          got++;
          lastLooked = m.seq;
          for (const event of this.parsed(m.string(), m.seq, m.subject)) if (!opts.types || opts.types.includes(event.type)) events.push(event);
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

  async scan(range: ScanRange, onBatch: (events: StoredEvent[]) => Promise<void>): Promise<number> {
    const until = range.untilSeq ?? (await this.lastSeq());
    if (range.fromSeq > until) return 0;
    // One ordered consumer for the whole range: a consumer per page costs three API round trips a page.
    const consumer = await this.js.consumers.get(this.streams.events, { filter_subjects: ALL_RUNS, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: range.fromSeq });
    let handed = 0;
    try {
      for (let done = false; !done;) {
        const batch = await consumer.fetch({ max_messages: range.batchSize ?? SCAN_BATCH, expires: 2000 });
        const events: StoredEvent[] = [];
        let got = 0;
        for await (const m of batch) {
          got++;
          if (m.seq <= until) events.push(...this.parsed(m.string(), m.seq, m.subject));
          // Stop at the end of the range: waiting out the fetch's expiry would only idle.
          if (m.seq >= until || m.info.pending === 0) done = true;
          if (done) break;
        }
        if (got === 0) done = true;
        if (events.length > 0) await onBatch(events);
        handed += events.length;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return handed;
  }

  async follow(opts: FollowOptions): Promise<void> {
    const consumer = await this.js.consumers.get(this.streams.events, {
      filter_subjects: opts.runId ? runSubject(opts.runId) : ALL_RUNS,
      ...(opts.afterSeq === undefined ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: opts.afterSeq + 1 }),
    });
    const messages = await consumer.consume({ max_messages: 256 });
    const stop = () => void messages.close().catch(() => undefined);
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      if (opts.signal?.aborted) return;
      for await (const m of messages) {
        const [event] = this.parsed(m.string(), m.seq, m.subject);
        if (!event) continue;
        await opts.onEvent(event);
        if (opts.until?.(event)) break;
      }
    } finally {
      opts.signal?.removeEventListener('abort', stop);
      stop();
      await consumer.delete().catch(() => undefined);
    }
  }

  async append(runId: string, events: ScaffoldEvent[], expectedLastSeq: number): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    let expected = expectedLastSeq;
    for (const event of events) {
      try {
        const ack = await this.js.publish(runSubject(runId), JSON.stringify(event), { msgID: event.id, expect: { lastSubjectSequence: expected } });
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
}
