import type { NatsConnection } from '@nats-io/nats-core';
import {
  Consumer,
  ConsumerMessages,
  DeliverPolicy,
  FetchOptions,
  JetStreamApiError,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
  jetstream,
  jetstreamManager,
  OrderedConsumerOptions,
} from '@nats-io/jetstream';
import { InvalidStreamMessage, ScaffoldEvent, StoredEvent, tryParseEvent } from '#libs/events';
import { ConcurrencyConflict, EventStore, FollowOptions, RangeQuery, ScanRange } from './event-store';
import { StoreReadIncomplete } from './store-errors';
import { openReader, ReaderCleanup, readSubject, releaseReader } from './jetstream-reads';
import { requireJetStreamServer, StreamReplicas, streamReplicas } from './stream-admin';
import { StreamConsumers } from './stream-consumers';
import { ALL_RUNS, DEFAULT_STREAMS, runSubject, StreamNames } from './streams';

const WRONG_LAST_SEQUENCE = 10071;
const STREAM_NOT_FOUND = 10059;

/** Events a whole-log scan fetches at a time. */
const SCAN_BATCH = 1000;
/** New readers a scan that ended early starts from where it stopped, and the pause before each. */
const SCAN_RESUMES = 5;
const SCAN_RESUME_PAUSE_MS = 500;
/** Run histories kept per process (a few KiB each): the runs in progress and recently read. */
const RUN_HISTORIES = 2000;

type RunHistory = { events: StoredEvent[]; lastSeq: number };

/**
 * The event log on JetStream: one stream, one subject per run, optimistic concurrency through
 * Nats-Expected-Last-Subject-Sequence and duplicate suppression through Nats-Msg-Id (both in 2.9).
 * Opening it changes nothing on the server: streams are StreamAdmin's.
 */
export class JetStreamEventStore implements EventStore {
  /**
   * Told of every message on an event subject that is not a valid event of its run (a client with
   * publish rights wrote it): readers skip it instead of failing; the service logs and counts it.
   */
  onInvalid: (message: InvalidStreamMessage) => void = () => undefined;

  /** Run histories by run, least recently used first. */
  private readonly histories = new Map<string, RunHistory>();

  /** The event stream's durable consumers: what processors pull from and what operators inspect. */
  readonly consumers: StreamConsumers;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly streams: StreamNames,
    private readonly cleanup: ReaderCleanup,
  ) {
    this.consumers = new StreamConsumers(js, jsm, streams.events);
  }

  /** `readOnly`: an identity that may not delete consumers (scaffolderctl with the ops identity): readers leave theirs to expire. */
  static async open(
    nc: NatsConnection,
    streams: StreamNames = DEFAULT_STREAMS,
    opts: { readOnly?: boolean } = {},
  ): Promise<JetStreamEventStore> {
    requireJetStreamServer(nc);
    return new JetStreamEventStore(nc, jetstream(nc), await jetstreamManager(nc), streams, {
      deletes: !opts.readOnly,
    });
  }

  /**
   * A run's history. Histories this process read or appended are kept (the most recent RUN_HISTORIES
   * runs): when the run's last sequence is still the kept one's, nothing else can have been written
   * to it (sequences only grow, even across a purge), so a step's gate read costs one request, not four.
   */
  async readRun(runId: string): Promise<{ events: StoredEvent[]; lastSeq: number }> {
    const last = await this.jsm.streams.getMessage(this.streams.events, { last_by_subj: runSubject(runId) });
    if (!last) return { events: [], lastSeq: 0 };
    const kept = this.histories.get(runId);
    if (kept?.lastSeq === last.seq) return this.keep(runId, kept);
    const messages = await readSubject(this.js, this.streams.events, runSubject(runId), last.seq, this.cleanup);
    return this.keep(runId, {
      events: messages.map((m) => this.parsed(m.data, m.seq, m.subject)).filter((e) => e !== undefined),
      lastSeq: last.seq,
    });
  }

  /** Keeps a run's history as the most recently used, dropping the least recently used beyond the bound. */
  private keep(runId: string, history: RunHistory): RunHistory {
    this.histories.delete(runId);
    this.histories.set(runId, history);
    if (this.histories.size > RUN_HISTORIES) this.histories.delete(this.histories.keys().next().value!);
    return { events: [...history.events], lastSeq: history.lastSeq };
  }

  /** The message as an event, or undefined (reported) when it is not one. */
  private parsed(data: string, seq: number, subject: string): StoredEvent | undefined {
    const result = tryParseEvent(data, seq, subject);
    if ('event' in result) return result.event;
    this.onInvalid(result.invalid);
    return undefined;
  }

  /** Whether JetStream answers this account's requests. */
  async reachable(): Promise<boolean> {
    return this.jsm.getAccountInfo().then(
      () => true,
      () => false,
    );
  }

  /** The streams of the event log that the server does not have. */
  async absentStreams(): Promise<string[]> {
    const absent = async (name: string) =>
      this.jsm.streams.info(name).then(
        () => [],
        (e) => {
          if (e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) return [name];
          throw e;
        },
      );
    return (await Promise.all(Object.values(this.streams).map(absent))).flat();
  }

  /**
   * The replicas of each of the log's streams, by name; undefined for a stream whose info does not come
   * (no leader elected, the API timed out).
   */
  async replicas(): Promise<Map<string, StreamReplicas | undefined>> {
    const names = Object.values(this.streams);
    const infos = await Promise.all(names.map((name) => this.jsm.streams.info(name).catch(() => undefined)));
    return new Map(names.map((name, i) => [name, infos[i] && streamReplicas(infos[i])]));
  }

  async lastSeq(): Promise<number> {
    return (await this.jsm.streams.info(this.streams.events)).state.last_seq;
  }

  /**
   * A page of events from `fromSeq` (or the first after `since`), at most `limit`. Every sequence of the events stream
   * is a message, so a read of all runs that stops before the stream's last without filling its page was cut off (as a
   * scan can be, see scan) and goes on from where it stopped; a run's own subject has gaps, and is read as it comes.
   */
  async readRange(opts: RangeQuery): Promise<{ events: StoredEvent[]; nextSeq: number | null }> {
    const lastSeq = await this.lastSeq();
    const start = opts.fromSeq ?? 1;
    if (lastSeq === 0 || start > lastSeq) return { events: [], nextSeq: null };
    const events: StoredEvent[] = [];
    let lastLooked = 0;
    for (let resumes = 0; ; resumes++) {
      const from =
        lastLooked > 0
          ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: lastLooked + 1 }
          : opts.since
            ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: opts.since.toISOString() }
            : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start };
      let full = false;
      pages: for await (const page of this.pages(
        { filter_subjects: opts.runId ? runSubject(opts.runId) : ALL_RUNS, ...from },
        Math.min(1000, opts.limit * 2),
        lastSeq,
        (m) => m,
      )) {
        for (const m of page) {
          lastLooked = m.seq;
          const event = this.parsed(m.string(), m.seq, m.subject);
          if (event && (!opts.types || opts.types.includes(event.type))) events.push(event);
          if ((full = events.length >= opts.limit)) break pages;
        }
      }
      // Nothing after a time is an answer (the reader counted nothing for it); nothing after a sequence is not.
      const cutOff = !full && !opts.runId && lastLooked < lastSeq && (lastLooked > 0 || !opts.since);
      if (!cutOff) break;
      await this.beforeResume(resumes, Math.max(lastLooked, start - 1), lastSeq);
    }
    return { events, nextSeq: lastLooked > 0 && lastLooked < lastSeq ? lastLooked + 1 : null };
  }

  /** Before a new reader replaces one that ended early: a pause, or StoreReadIncomplete once SCAN_RESUMES were tried. */
  private async beforeResume(resumes: number, reached: number, until: number): Promise<void> {
    if (resumes >= SCAN_RESUMES)
      throw new StoreReadIncomplete(`a read of ${this.streams.events} ended at sequence ${reached} of ${until}`);
    await new Promise((resolve) => setTimeout(resolve, SCAN_RESUME_PAUSE_MS));
  }

  /**
   * Every event from `fromSeq` to `untilSeq` (the stream's last when not given), in batches. The stream holds run
   * subjects only, so every sequence up to `until` is a message: a reader that ends before it (an empty fetch while a
   * stream elects its leader, a consumer on a replica still catching up that counts nothing pending) did not reach
   * the end, and the scan goes on from where it stopped with a new reader, SCAN_RESUMES times at most, then fails.
   * Never a partial scan taken for the whole log: a projection rebuilt from one would go back in time, silently.
   */
  async scan(range: ScanRange, onBatch: (events: StoredEvent[]) => Promise<void>): Promise<number> {
    const until = range.untilSeq ?? (await this.lastSeq());
    let handed = 0;
    let next = range.fromSeq;
    for (let resumes = 0; next <= until; resumes++) {
      if (resumes > 0) await this.beforeResume(resumes - 1, next - 1, until);
      for await (const events of this.pages(
        { filter_subjects: ALL_RUNS, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next },
        range.batchSize ?? SCAN_BATCH,
        until,
        (m) => {
          next = m.seq + 1;
          return this.parsed(m.string(), m.seq, m.subject);
        },
        { ahead: true },
      )) {
        await onBatch(events);
        handed += events.length;
      }
    }
    return handed;
  }

  /**
   * The stream's messages up to sequence `until`, in pages of what `take` made of them (a message it
   * makes nothing of is left out), from one ordered consumer (a consumer per page would cost three API
   * round trips a page), deleted when the reader stops. A message is taken (decoded) as it arrives, not
   * when its page is complete, so a page holds what the caller needs rather than the messages it came from.
   * `ahead`: the next page is pulled as soon as this one has arrived, so the server reads and sends it
   * while the caller handles this one (a whole-log scan: otherwise the connection idles while a page is
   * handled, and the handler for each pull's round trip). A reader that stops after a few events
   * (readRange's limit) does not, not to pull a page it throws away.
   */
  private async *pages<T>(
    config: Partial<OrderedConsumerOptions>,
    pageSize: number,
    until: number,
    take: (m: JsMsg) => T | undefined,
    { ahead = false } = {},
  ): AsyncGenerator<T[]> {
    const consumer = await openReader(this.js, this.streams.events, config);
    // The reader's consumer counts at its creation what it has for the reader: with nothing (a time after the last
    // event, a run with nothing after the sequence), a pull would wait out its expiry for no message.
    if ((await consumer.info(true)).num_pending === 0) {
      await releaseReader(consumer, this.cleanup);
      return;
    }
    const pull = () => new PagePull(consumer, pageSize, until, take);
    // The pull not yet handed on (one at a time: an ordered consumer refuses a second while one is open).
    let pulled: PagePull<T> | undefined = pull();
    try {
      while (pulled) {
        const { page, looked, last }: PulledPage<T> = await pulled.page;
        pulled = !last && ahead ? pull() : undefined;
        if (looked === 0) return;
        if (page.length > 0) yield page;
        if (!last && !ahead) pulled = pull();
      }
    } finally {
      await pulled?.stop();
      await releaseReader(consumer, this.cleanup);
    }
  }

  async follow(opts: FollowOptions): Promise<void> {
    const consumer = await openReader(this.js, this.streams.events, {
      filter_subjects: opts.runId ? runSubject(opts.runId) : ALL_RUNS,
      ...(opts.afterSeq === undefined
        ? { deliver_policy: DeliverPolicy.All }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: opts.afterSeq + 1 }),
    });
    const messages = await consumer.consume({ max_messages: 256 });
    const stop = () => void messages.close().catch(() => undefined);
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      if (opts.signal?.aborted) return;
      for await (const m of messages) {
        const event = this.parsed(m.string(), m.seq, m.subject);
        if (!event) continue;
        await opts.onEvent(event);
        if (opts.until?.(event)) break;
      }
    } finally {
      opts.signal?.removeEventListener('abort', stop);
      stop();
      await releaseReader(consumer, this.cleanup);
    }
  }

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
        const appended = { ...event, seq: ack.seq };
        stored.push(appended);
        // The publish was accepted only if `expected` was the subject's last sequence: a history kept up to it (or
        // none, for a new run) plus this event is the run's whole history, without a read.
        const before =
          expected === 0
            ? []
            : this.histories.get(runId)?.lastSeq === expected
              ? this.histories.get(runId)!.events
              : undefined;
        if (before) this.keep(runId, { events: [...before, appended], lastSeq: ack.seq });
        expected = ack.seq;
      } catch (e) {
        if (e instanceof JetStreamApiError && e.code === WRONG_LAST_SEQUENCE) throw new ConcurrencyConflict(runId);
        throw e;
      }
    }
    return stored;
  }
}

interface PulledPage<T> {
  page: T[];
  /** The messages up to `until` the pull brought, taken or not. */
  looked: number;
  /** Whether the range ends with this page: at `until`, with nothing pending, or with an empty pull. */
  last: boolean;
}

/**
 * One pull of an ordered consumer's next page, sent at once and taken message by message as it arrives
 * (a callback, not the library's iterator: the iterator sends the pull only when it is first read, and
 * an await per message). It ends at `until` or when nothing more is pending: waiting out the fetch's
 * expiry would only idle.
 */
class PagePull<T> {
  readonly page: Promise<PulledPage<T>>;
  private readonly messages: Promise<ConsumerMessages>;

  constructor(consumer: Consumer, pageSize: number, until: number, take: (m: JsMsg) => T | undefined) {
    const taken: PulledPage<T> = { page: [], looked: 0, last: false };
    this.messages = consumer.fetch({
      max_messages: pageSize,
      expires: 2000,
      // The library's fetch takes a callback as its consume does, though its FetchOptions type leaves it out
      // (the whole-log scan specs fail if that changes).
      callback: (m: JsMsg) => {
        if (taken.last) return;
        if (m.seq <= until) {
          taken.looked++;
          const t = take(m);
          if (t !== undefined) taken.page.push(t);
        }
        if (m.seq >= until || m.info.pending === 0) {
          taken.last = true;
          void this.stop();
        }
      },
    } as FetchOptions);
    this.page = this.messages.then(async (messages) => {
      const failed = await messages.closed();
      if (failed) throw failed;
      return { ...taken, last: taken.last || taken.looked === 0 };
    });
    // A pull that fails while the caller handles the previous page fails where it is read, not as an unhandled rejection.
    this.page.catch(() => undefined);
  }

  /** Ends the pull (a reader that stops before reading it, or the end of the range). */
  async stop(): Promise<void> {
    (await this.messages.catch(() => undefined))?.stop();
  }
}
