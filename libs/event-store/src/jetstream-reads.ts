import { Consumer, DeliverPolicy, JetStreamClient, OrderedConsumerOptions } from '@nats-io/jetstream';
import { isStoreUnavailable } from './store-errors';

/**
 * How long the server keeps a reader's ordered consumer after its last pull. A reader deletes its
 * consumer when done, except one that may not (the read-only ops identity has no CONSUMER.DELETE, #28):
 * its consumers expire by themselves after this, not after the client's default of 5 minutes. Long
 * enough for a page's handler (a rebuild writing a batch to PostgreSQL) between two pulls.
 */
export const READER_INACTIVE_MS = 60_000;

/** Tries at creating a reader's consumer, and the pause between two. */
export const READER_OPEN_ATTEMPTS = 3;
const READER_OPEN_PAUSE_MS = 1000;

/**
 * A reader's ordered consumer on `stream`. Creating it is a request to the stream's leader, which times out
 * or finds no responder while a JetStream cluster elects a new one after a node died; a reader (a rebuild, a
 * run's history, an audit page) tries again after a pause instead of failing on a few seconds of failover.
 * Any other error (no such stream, no permission) fails at once. A consumer created by a try whose reply was
 * lost is never used and expires by itself (READER_INACTIVE_MS).
 */
export async function openReader(
  js: JetStreamClient,
  stream: string,
  config: Partial<OrderedConsumerOptions>,
): Promise<Consumer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await js.consumers.get(stream, { ...config, inactive_threshold: READER_INACTIVE_MS });
    } catch (e) {
      if (attempt >= READER_OPEN_ATTEMPTS || !isStoreUnavailable(e)) throw e;
      await new Promise((resolve) => setTimeout(resolve, READER_OPEN_PAUSE_MS));
    }
  }
}

/** Whether this process deletes its readers' consumers (false for a read-only identity). */
export interface ReaderCleanup {
  deletes: boolean;
}

/** Deletes a finished reader's consumer where allowed; otherwise the server expires it (READER_INACTIVE_MS). */
export async function releaseReader(consumer: Consumer, cleanup: ReaderCleanup): Promise<void> {
  if (cleanup.deletes) await consumer.delete().catch(() => undefined);
}

/** Empty fetches in a row after which a read gives up (the caller retries) instead of returning a partial history. */
const EMPTY_FETCHES_ALLOWED = 5;

/**
 * Every message of one subject of a stream, oldest first, up to and including `untilSeq` (which the
 * caller knows is on the subject: its last message). An ordered consumer, deleted after. An empty
 * fetch is not the end: during a leader election a fetch can come back empty although messages
 * remain, and a run folded from a partial history would look one step behind (its step would then be
 * skipped as already done). So the read goes on until `untilSeq` or fails.
 */
export async function readSubject(
  js: JetStreamClient,
  stream: string,
  subject: string,
  untilSeq: number,
  cleanup: ReaderCleanup = { deletes: true },
): Promise<Array<{ seq: number; subject: string; data: string }>> {
  const consumer = await openReader(js, stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
  const out: Array<{ seq: number; subject: string; data: string }> = [];
  try {
    for (let empty = 0; empty < EMPTY_FETCHES_ALLOWED;) {
      const batch = await consumer.fetch({ max_messages: 256, expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        out.push({ seq: m.seq, subject: m.subject, data: m.string() });
        if (m.seq >= untilSeq) return out;
      }
      empty = got === 0 ? empty + 1 : 0;
    }
  } finally {
    await releaseReader(consumer, cleanup);
  }
  throw new Error(
    `reading ${subject} of ${stream} stopped at sequence ${out.at(-1)?.seq ?? 0} before ${untilSeq}; try again`,
  );
}
