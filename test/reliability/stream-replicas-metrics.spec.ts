import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { JetStreamEventStore, StreamAdmin } from '#libs/event-store';
import { Metrics } from '../../src/metrics/metrics';
import { waitFor } from '../support/service';
import { TestNatsCluster } from '../support/services';

jest.setTimeout(120_000);

const STREAMS = { events: 'REPLICAS_EVENTS', logs: 'REPLICAS_LOGS', inputs: 'REPLICAS_INPUTS' };

/**
 * The replica gauges against a real 3-node JetStream cluster: the service's three streams applied with
 * STREAM_REPLICAS=3, a follower of one of them stopped and started again. What the
 * GitopsScaffolderStreamUnderReplicated alert compares is what the cluster reports.
 */
describe('scaffold_stream_replicas_current / _configured on a 3-node cluster', () => {
  let cluster: TestNatsCluster;
  let nc: NatsConnection;
  let store: JetStreamEventStore;

  beforeAll(async () => {
    cluster = await TestNatsCluster.start();
    nc = await connect({ servers: cluster.nodes.map((n) => n.url) });
    await waitFor(
      'the JetStream meta leader',
      () =>
        jetstreamManager(nc)
          .then((jsm) => jsm.getAccountInfo())
          .catch(() => undefined),
      30_000,
    );
    await waitFor(
      'the streams, R3',
      () =>
        new StreamAdmin(nc, STREAMS)
          .apply(3)
          .then(() => true)
          .catch(() => undefined),
      30_000,
    );
    store = await JetStreamEventStore.open(nc, STREAMS);
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.destroy();
  });

  const replicaGauges = async (metrics: Metrics) => {
    const text = await metrics.registry.getSingleMetricAsString('scaffold_stream_replicas_current');
    const configured = await metrics.registry.getSingleMetricAsString('scaffold_stream_replicas_configured');
    const read = (t: string) =>
      Object.fromEntries([...t.matchAll(/\{stream="(\w+)"\} (\d+)/g)].map(([, s, v]) => [s, Number(v)]));
    return { current: read(text), configured: read(configured) };
  };

  it('counts the leader and each current follower, drops to 2 while a follower is down and recovers', async () => {
    const metrics = new Metrics(store);
    await waitFor('every copy current', async () => {
      const g = await replicaGauges(metrics);
      return Object.values(STREAMS).every((s) => g.current[s] === 3) ? g : undefined;
    });
    expect((await replicaGauges(metrics)).configured).toEqual({
      REPLICAS_EVENTS: 3,
      REPLICAS_LOGS: 3,
      REPLICAS_INPUTS: 3,
    });

    const info = await store.jsm.streams.info(STREAMS.events);
    const follower = info.cluster!.replicas!.find((r) => r.name !== info.cluster!.leader)!.name;
    const node = cluster.node(follower);
    // (Were our connection on that node, it moves to another of the three: the reads go on.)
    await node.stop('SIGTERM');
    const down = await waitFor(
      'the stopped follower missing from the current copies',
      async () => {
        const g = await replicaGauges(metrics);
        return g.current[STREAMS.events] === 2 ? g : undefined;
      },
      60_000,
    );
    expect(down.configured[STREAMS.events]).toBe(3);

    await node.startProcess();
    await waitFor(
      'the follower current again',
      async () => ((await replicaGauges(metrics)).current[STREAMS.events] === 3 ? true : undefined),
      60_000,
    );
  });
});
