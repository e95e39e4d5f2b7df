import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  DEFAULT_STREAMS,
  handleCommand,
  JetStreamEventStore,
  JetStreamIdempotencyKeys,
  runSubject,
  serverAtLeast,
  StreamAdmin,
} from '../../libs/event-store/src';
import { runDecider } from '../../libs/run-decider/src';
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
