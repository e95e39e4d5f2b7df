import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { ConcurrencyConflict, decideAndAppend, JetStreamEventStore, serverAtLeast, StreamAdmin } from '../../libs/event-store/src';
import { stamp } from '../../libs/events/src';
import { decide, runDecider } from '../../libs/run-decider/src';
import { TestNats } from '../support/services';

describe('JetStream event store (real nats-server 2.9)', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let store: JetStreamEventStore;
  const requestData = {
    cluster_name: 'c', domain: 'c.example.com', region: 'eu-west-1', acme_email: 'a@example.com', repo_url: 'https://x/y.git', branch: 'main',
    target: { kind: 'sealing_cert' as const, fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00Z' }, requested_by: 't',
  };
  const event = (runId: string, id = randomUUID()) => stamp({ type: 'ScaffoldRequested', data: requestData }, runId, id, new Date(), null);

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

  it('refuses an append whose expected last sequence of the run is stale', async () => {
    const run = randomUUID();
    await store.append(run, [event(run)], 0);
    await expect(store.append(run, [event(run)], 0)).rejects.toBeInstanceOf(ConcurrencyConflict);
    expect((await store.readRun(run)).events).toHaveLength(1);
  });

  it('drops a duplicate Nats-Msg-Id within the window', async () => {
    const run = randomUUID();
    const e = event(run, `${run}-fixed`);
    const [first] = await store.append(run, [e], 0);
    await expect(store.append(run, [e], first.seq)).rejects.toBeInstanceOf(ConcurrencyConflict);
    expect((await store.readRun(run)).events).toHaveLength(1);
  });

  it('re-reads and decides again when two writers race on one run', async () => {
    const run = randomUUID();
    await store.append(run, [event(run)], 0);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => decideAndAppend(store, run, runDecider, (s) => decide({ type: 'RequestCancel', requestedBy: 'x' }, s))),
    );
    expect(results.flatMap((r) => r.appended)).toHaveLength(1);
    expect((await store.readRun(run)).events.map((e) => e.type)).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested']);
  });

  it('reads a run of many events in order', async () => {
    const run = randomUUID();
    let seq = 0;
    for (let i = 0; i < 300; i++) seq = (await store.append(run, [event(run)], seq))[0].seq;
    const { events, lastSeq } = await store.readRun(run);
    expect(events).toHaveLength(300);
    expect(lastSeq).toBe(seq);
    expect(events.every((e, i) => i === 0 || e.seq > events[i - 1].seq)).toBe(true);
  });
});
