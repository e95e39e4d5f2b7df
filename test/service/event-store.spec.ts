import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  DEFAULT_STREAMS,
  handleCommand,
  JetStreamEventStore,
  type RangeQuery,
  JetStreamIdempotencyKeys,
  runSubject,
  serverAtLeast,
  StoreReadIncomplete,
  StreamAdmin,
} from '#libs/event-store';
import { runDecider } from '#libs/run-decider';
import { eventStoreContract, requestedEvent } from '../support/event-store-contract';
import { SCAFFOLD_REQUEST } from '../support/run-fixtures';
import { TestNats } from '../support/services';

describe('JetStream event store (real nats-server 2.9)', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let store: JetStreamEventStore;

  beforeAll(async () => {
    nats = await TestNats.start();
    nc = await connect({ servers: nats.url });
    await new StreamAdmin(nc).apply(1);
    store = await JetStreamEventStore.open(nc);
  });
  afterAll(async () => {
    await nc.close();
    await nats.destroy();
  });

  it('checks the server version', () => {
    expect(serverAtLeast(nc.info!.version)).toBe(true);
    expect(serverAtLeast('2.8.4')).toBe(false);
    expect(serverAtLeast('2.10.0')).toBe(true);
  });

  eventStoreContract(() => store);

  describe('Idempotency-Key claims', () => {
    it('are won by one of many concurrent claims, kept across processes, and never overwritten', async () => {
      const scope = randomUUID().replaceAll('-', '');
      const proposals = Array.from({ length: 8 }, (_, i) => ({ runId: randomUUID(), requestDigest: `digest-${i}` }));
      const answers = await Promise.all(
        proposals.map((p, i) => new JetStreamIdempotencyKeys(nc).claim(scope, p).then((c) => [i, c] as const)),
      );
      const winners = new Set(answers.map(([, c]) => c.runId));
      expect(winners.size).toBe(1);
      expect(proposals.map((p) => p.runId)).toContain([...winners][0]);
      const later = await new JetStreamIdempotencyKeys(nc).claim(scope, {
        runId: randomUUID(),
        requestDigest: 'another',
      });
      expect(later).toEqual(answers[0][1]);
      const jsm = await jetstreamManager(nc);
      expect(
        (
          await jsm.streams.getMessage(DEFAULT_STREAMS.inputs, {
            last_by_subj: `scaffold.input.idempotency-key.${scope}`,
          })
        )?.seq,
      ).toBeGreaterThan(0);
    });
  });

  describe('whole-log scans', () => {
    /** The reader consumer a scan from `fromSeq` opened, if it is still there. */
    const reader = async (fromSeq: number) => {
      const jsm = await jetstreamManager(nc);
      for await (const c of jsm.consumers.list(DEFAULT_STREAMS.events))
        if (c.config.opt_start_seq === fromSeq) return c;
      return undefined;
    };
    /** Appends `events` ScaffoldRequested events to a new run, with a message that is not an event after the first; their sequences. */
    const writeRun = async (events: number) => {
      const run = randomUUID();
      const [first] = await store.append(run, [requestedEvent(run)], 0);
      const bad = await store.js.publish(runSubject(run), 'not an event');
      const rest = await store.append(
        run,
        Array.from({ length: events - 1 }, () => requestedEvent(run)),
        bad.seq,
      );
      return { first: first.seq, bad: bad.seq, all: [first, ...rest].map((e) => e.seq) };
    };

    it('pull the next page while one is handled, hand pages in order, report what is not an event, stop at the end and let go of their reader', async () => {
      const { first, bad, all } = await writeRun(300);
      const until = all[249];
      const invalid: number[] = [];
      const scanning = await JetStreamEventStore.open(nc);
      scanning.onInvalid = (m) => void invalid.push(m.seq);
      const batches: number[][] = [];
      let deliveredWhileFirstHandled = 0;
      const handed = await scanning.scan({ fromSeq: first, untilSeq: until, batchSize: 50 }, async (events) => {
        batches.push(events.map((e) => e.seq));
        if (batches.length > 1) return;
        // The first page is being handled: the reader has already been sent the next one (or gets it soon).
        for (let i = 0; i < 100 && deliveredWhileFirstHandled < 100; i++) {
          deliveredWhileFirstHandled = (await reader(first))?.delivered.consumer_seq ?? 0;
          if (deliveredWhileFirstHandled < 100) await new Promise((r) => setTimeout(r, 50));
        }
      });
      expect(deliveredWhileFirstHandled).toBe(100);
      expect(handed).toBe(250);
      expect(batches.flat()).toEqual(all.slice(0, 250));
      // 50 messages a page: the first page held the message that is not an event, reported and left out.
      expect(batches.map((b) => b.length)).toEqual([49, 50, 50, 50, 50, 1]);
      expect(invalid).toEqual([bad]);
      expect(await reader(first)).toBeUndefined();
    });

    it('let go of their reader, with a page pulled ahead, when the handler fails', async () => {
      const { first } = await writeRun(200);
      let calls = 0;
      await expect(
        store.scan({ fromSeq: first, batchSize: 50 }, async () => {
          if (++calls === 2) throw new Error('handler failed');
        }),
      ).rejects.toThrow('handler failed');
      expect(calls).toBe(2);
      expect(await reader(first)).toBeUndefined();
    });

    // A reader can end before the sequence the stream's leader reported (an empty fetch during an election, a
    // consumer on a replica still catching up): a rebuild took such a scan for the whole log and went back in time.
    it('go on from where a reader stopped early with a new one, and fail rather than hand a partial log as whole', async () => {
      const { all } = await writeRun(20);
      const last = all.at(-1)!;
      const seen: number[] = [];
      // The stream holds two more events than the reader first finds: they arrive while the scan waits to go on.
      setTimeout(() => {
        const late = randomUUID();
        void store.append(late, [requestedEvent(late), requestedEvent(late)], 0);
      }, 200);
      const handed = await store.scan({ fromSeq: all[0], untilSeq: last + 2 }, async (events) => {
        seen.push(...events.map((e) => e.seq));
      });
      expect(handed).toBe(22); // 20 events of the run (its message that is not an event left out) and the 2 late ones
      expect(seen.slice(-2)).toEqual([last + 1, last + 2]);

      const never = store.scan({ fromSeq: last + 1, untilSeq: last + 10 }, async () => undefined);
      await expect(never).rejects.toThrow(StoreReadIncomplete);
      await expect(never).rejects.toThrow(`ended at sequence ${last + 2} of ${last + 10}`);
    });

    it('of a range of all runs do the same; a run’s own range is read as it comes (its subject has gaps)', async () => {
      const { all } = await writeRun(5);
      const last = all.at(-1)!;
      // A store whose stream's leader reports two events more than its reader first finds.
      const reading = await JetStreamEventStore.open(nc);
      const leaderSays = reading.lastSeq.bind(reading);
      reading.lastSeq = async () => (await leaderSays()) + 2;
      const late = randomUUID();
      setTimeout(() => void store.append(late, [requestedEvent(late), requestedEvent(late)], 0), 200);
      const page = await reading.readRange({ fromSeq: all[0], limit: 100 });
      expect(page.events.map((e) => e.seq).slice(-2)).toEqual([last + 1, last + 2]);
      expect(page.events).toHaveLength(7);

      // Resumed, it would wait for events of the run up to the leader's last and fail: it answers what the run has.
      const ownRun = await reading.readRange({ runId: late, fromSeq: last + 1, limit: 100 });
      expect(ownRun.events).toHaveLength(2);
      await expect(reading.readRange({ fromSeq: last + 3, limit: 10 })).rejects.toThrow(StoreReadIncomplete);
    });
  });

  describe('range reads with nothing to read', () => {
    // A pull with nothing to deliver stays open until it expires (2 s): `scaffolderctl replay` paid that for each
    // empty page (#49). The reader's consumer says at its creation how many messages it has for the reader.
    it('answer at once: a time after the last event, a run with nothing after a sequence', async () => {
      const run = randomUUID();
      const [appended] = await store.append(run, [requestedEvent(run)], 0);
      const later = randomUUID(); // the run's event is not the stream's last
      await store.append(later, [requestedEvent(later)], 0);
      const emptyAndQuick = async (range: RangeQuery) => {
        const started = Date.now();
        const { events, nextSeq } = await store.readRange(range);
        return { events, nextSeq, quick: Date.now() - started < 1000 };
      };
      const answer = { events: [], nextSeq: null, quick: true };
      expect(await emptyAndQuick({ since: new Date(Date.now() + 60_000), limit: 10 })).toEqual(answer);
      expect(await emptyAndQuick({ runId: run, fromSeq: appended.seq + 1, limit: 10 })).toEqual(answer);
    });
  });

  describe('kept run histories', () => {
    const types = async (s: JetStreamEventStore, run: string) =>
      (await s.readRun(run)).events.map((e) => `${e.seq}:${e.type}`);

    it('see what another process appended, what a raw publish added, and a subject purged and written again', async () => {
      const other = await JetStreamEventStore.open(nc);
      const run = randomUUID();
      const [requested] = await store.append(run, [requestedEvent(run)], 0);
      expect(await types(store, run)).toEqual([`${requested.seq}:ScaffoldRequested`]);
      // Another replica decides on the same run: this store's kept history is one event behind and catches up.
      const cancel = await handleCommand(other, runDecider, run, { type: 'RequestCancel', requestedBy: 'x' });
      expect(await types(store, run)).toEqual([
        `${requested.seq}:ScaffoldRequested`,
        `${cancel.appended[0].seq}:ScaffoldCancelRequested`,
      ]);
      // A message that is not an event (a client with publish rights) is skipped on the catch-up read, as on a full read.
      await nc.request(runSubject(run), 'not an event');
      expect(await types(store, run)).toEqual(await types(await JetStreamEventStore.open(nc), run));
      // An operator purges the run's subject and it is written again: nothing of the old history is kept.
      await jetstreamManager(nc).then((m) => m.streams.purge(DEFAULT_STREAMS.events, { filter: runSubject(run) }));
      const [again] = await other.append(run, [requestedEvent(run)], 0);
      expect(await types(store, run)).toEqual([`${again.seq}:ScaffoldRequested`]);
    });

    it("stay current through this store's own appends without reading, and equal a fresh read", async () => {
      const run = randomUUID();
      await handleCommand(store, runDecider, run, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST });
      await handleCommand(store, runDecider, run, { type: 'RequestCancel', requestedBy: 'x' });
      const fresh = await (await JetStreamEventStore.open(nc)).readRun(run);
      expect(await store.readRun(run)).toEqual(fresh);
      expect(fresh.events.map((e) => e.type)).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested']);
    });
  });
});
