/**
 * Replay and projection rebuild rates (events per second) next to the raw JetStream read rate of the
 * same stream, measured in the same run, for streams of BENCH_EVENTS (10,000 and 100,000) events, with
 * the process's memory after each, so growth with the stream shows. Run: npm run bench:replay
 */
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { ConsumerMessages, DeliverPolicy, FetchOptions } from '@nats-io/jetstream';
import { JetStreamEventStore, StreamAdmin } from '#libs/event-store';
import { EventDraft, stamp } from '#libs/events';
import { makeDataSource } from '../src/projection/data-source';
import { rebuildProjection } from '../src/projection/rebuild';
import { TestDatabase, TestNats } from '../test/support/services';
import { replayAll, timed } from './measure';

const SIZES = (process.env.BENCH_EVENTS ?? '10000,100000').split(',').map(Number);

function runEvents(runId: string): EventDraft[] {
  const c = 'a'.repeat(40);
  return [
    {
      type: 'ScaffoldRequested',
      data: {
        cluster_name: `c-${runId.slice(0, 8)}`,
        domain: 'x.example.com',
        region: 'eu-west-1',
        acme_email: 'a@example.com',
        repo_url: 'https://git.example.com/f.git',
        branch: 'main',
        target: { kind: 'sealing_cert', fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00Z' },
        requested_by: 'bench',
      },
    },
    { type: 'InfraPushed', data: { commit: c, files_changed: 10 } },
    { type: 'SealedSecretsReady', data: { source: 'given_certificate', controller: null } },
    { type: 'CertFetched', data: { fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00Z' } },
    { type: 'FullPushed', data: { commit: c, objects_sealed: 3 } },
    { type: 'ScaffoldSucceeded', data: { infra_commit: c, full_commit: c } },
  ];
}

async function main() {
  const results = [];
  for (const events of SIZES) results.push(await measure(Math.ceil(events / 6)));
  console.log(JSON.stringify(results, null, 2));
}

/** One stream of `runs` six-event runs: written, read raw, replayed and rebuilt, each timed. */
async function measure(runs: number) {
  const nats = await TestNats.start();
  const db = await TestDatabase.create();
  const nc = await connect({ servers: nats.url });
  await new StreamAdmin(nc).apply(1);
  const store = await JetStreamEventStore.open(nc);
  const ds = makeDataSource(db.url);
  await ds.initialize();
  await ds.runMigrations();
  try {
    // Write the stream (async publishes, one subject per run, as the service does).
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < runs; i++) {
      const runId = randomUUID();
      for (const d of runEvents(runId))
        writes.push(
          store.js.publish(`scaffold.run.${runId}`, JSON.stringify(stamp(d, runId, randomUUID(), new Date(), null))),
        );
      if (writes.length > 3000) await Promise.all(writes.splice(0));
    }
    await Promise.all(writes);
    const total = runs * 6;

    // Baseline: raw ordered-consumer read of the whole stream, no parsing, through the client's iterator; and the same
    // read with the fetch's callback (what the replay's reader uses), so that the replay's lead over the first is not
    // only its way of taking messages.
    // An untimed read first: the first read of a process pays for compiling the client's code, which would flatter the replay.
    await rawRead(store, total, 'iterator');
    const { result: raw, seconds: rawSeconds } = await timed(() => rawRead(store, total, 'iterator'));
    const { result: rawCb, seconds: rawCbSeconds } = await timed(() => rawRead(store, total, 'callback'));

    // Replay: read, parse, upcast and validate every event (what scaffolderctl replay does before printing).
    const { result: replayed, seconds: replaySeconds } = await timed(() => replayAll(store));
    const afterReplay = process.memoryUsage().rss;

    // Rebuild: fold into a fresh table (runs written once each, in multi-row upserts), then swap.
    const rebuild = await rebuildProjection(store, ds);
    const afterRebuild = process.memoryUsage().rss;

    const rate = (n: number, s: number) => Math.round(n / s);
    const mib = (bytes: number) => Math.round(bytes / 1048576);
    return {
      events: total,
      raw_jetstream_read_events_per_s: rate(raw, rawSeconds),
      raw_callback_read_events_per_s: rate(rawCb, rawCbSeconds),
      replay_events_per_s: rate(replayed, replaySeconds),
      rebuild_events_per_s: rate(rebuild.events, rebuild.seconds),
      replay_vs_raw: +(rate(replayed, replaySeconds) / rate(raw, rawSeconds)).toFixed(3),
      replay_vs_raw_callback: +(rate(replayed, replaySeconds) / rate(rawCb, rawCbSeconds)).toFixed(3),
      rebuild_vs_raw: +(rate(rebuild.events, rebuild.seconds) / rate(raw, rawSeconds)).toFixed(3),
      rss_mib: { after_replay: mib(afterReplay), after_rebuild: mib(afterRebuild) },
    };
  } finally {
    await ds.destroy();
    await nc.close();
    await nats.destroy();
    await db.drop();
  }
}

/** Reads the whole stream, 1,000 messages a fetch, one fetch after another, without parsing; the count read. */
async function rawRead(store: JetStreamEventStore, total: number, delivery: 'iterator' | 'callback'): Promise<number> {
  const consumer = await store.js.consumers.get(store.streams.events, { deliver_policy: DeliverPolicy.All });
  let read = 0;
  while (read < total) {
    if (delivery === 'iterator') {
      for await (const _m of await consumer.fetch({ max_messages: 1000, expires: 2000 })) {
        // Stop at the last event: waiting out the fetch's expiry would count idle time against the baseline.
        if (++read >= total) break;
      }
      continue;
    }
    const fetched: ConsumerMessages = await consumer.fetch({
      max_messages: 1000,
      expires: 2000,
      // Taken by the client's fetch as by its consume, though its FetchOptions type leaves it out.
      callback: () => void (++read >= total && fetched.stop()),
    } as FetchOptions);
    await fetched.closed();
  }
  return read;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
