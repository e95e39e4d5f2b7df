/**
 * What replication costs: event appends (as the service makes them: one at a time per run, with the
 * expected last sequence of the run's subject) and replay, on the same 3-node JetStream cluster with the
 * streams at 1 replica and at 3 replicas, measured in the same run. Run: npm run bench:replication
 */
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { JetStreamEventStore, StreamAdmin } from '#libs/event-store';
import { EventDraft, stamp } from '#libs/events';
import { TestNatsCluster } from '../test/support/services';
import { replayAll, timed } from './measure';

const RUNS = Number(process.env.BENCH_RUNS ?? 1000);
const PARALLEL_RUNS = Number(process.env.BENCH_PARALLEL ?? 50);

const EVENTS: EventDraft['type'][] = ['InfraPushed', 'SealedSecretsReady', 'FullPushed'];
const draft = (type: EventDraft['type']): EventDraft =>
  type === 'InfraPushed'
    ? { type, data: { commit: 'a'.repeat(40), files_changed: 10 } }
    : type === 'SealedSecretsReady'
      ? { type, data: { source: 'given_certificate', controller: null } }
      : { type: 'FullPushed', data: { commit: 'b'.repeat(40), objects_sealed: 3 } };

/** One run's events appended one after the other, each expecting the previous one's sequence (as handleCommand does). */
async function appendRun(store: JetStreamEventStore) {
  const runId = randomUUID();
  let last = 0;
  for (const type of EVENTS)
    [{ seq: last }] = await store.append(runId, [stamp(draft(type), runId, randomUUID(), new Date(), null)], last);
}

async function measure(store: JetStreamEventStore, replicas: number) {
  const jsm = await jetstreamManager(store.nc);
  for (const s of Object.values(store.streams)) await jsm.streams.delete(s).catch(() => undefined);
  await new StreamAdmin(store.nc).apply(replicas);
  const sequential = await timed(async () => {
    for (let i = 0; i < RUNS / 10; i++) await appendRun(store);
  });
  const parallel = await timed(async () => {
    for (let done = 0; done < RUNS; done += PARALLEL_RUNS)
      await Promise.all(Array.from({ length: PARALLEL_RUNS }, () => appendRun(store)));
  });
  const replay = await timed(() => replayAll(store));
  return {
    sequential_appends_per_s: Math.round(((RUNS / 10) * EVENTS.length) / sequential.seconds),
    parallel_appends_per_s: Math.round((RUNS * EVENTS.length) / parallel.seconds),
    replay_events_per_s: Math.round(replay.result / replay.seconds),
  };
}

async function main() {
  const cluster = await TestNatsCluster.start();
  const nc = await connect({ servers: cluster.nodes.map((n) => n.url) });
  try {
    // JetStream answers once the cluster has elected its meta leader.
    for (let i = 0; i < 100; i++) {
      const up = await jetstreamManager(nc)
        .then((jsm) => jsm.getAccountInfo())
        .then(
          () => true,
          () => false,
        );
      if (up) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const store = await JetStreamEventStore.open(nc);
    const r1 = await measure(store, 1);
    const r3 = await measure(store, 3);
    const ratio = (k: keyof typeof r1) => +(r3[k] / r1[k]).toFixed(2);
    console.log(
      JSON.stringify(
        {
          runs: RUNS,
          parallel_runs: PARALLEL_RUNS,
          r1,
          r3,
          r3_vs_r1: {
            sequential_appends: ratio('sequential_appends_per_s'),
            parallel_appends: ratio('parallel_appends_per_s'),
            replay: ratio('replay_events_per_s'),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await nc.close();
    await cluster.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
