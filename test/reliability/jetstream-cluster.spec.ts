import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { rebuildProjection } from '../../src/projection/rebuild';
import { makeRsaCert } from '../support/certs';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { api, RunningService, startService, untilTerminal, waitFor } from '../support/service';
import { bareRepo, readModelRows, runCommits, TestDatabase, TestNatsCluster } from '../support/services';
import { jobNameFor } from '#libs/kube';
import { FakeKube } from '../support/fake-kube';
import { readFileSync, writeFileSync } from 'node:fs';
import { artifactPath, tempDir } from '../support/files';
import { runJob, runnerAccess } from '../support/runner-job';

jest.setTimeout(240_000);

const STREAMS = ['SCAFFOLD_EVENTS', 'SCAFFOLD_LOGS', 'SCAFFOLD_INPUTS'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Past one machine: a 3-node JetStream cluster, streams with 3 replicas, the service connected with
 * all three servers in NATS_URL. Nodes are stopped and restarted one at a time while runs go on: the
 * stream leader (SIGKILL), the node the service is connected to (SIGKILL), a follower (SIGTERM).
 */
describe('a 3-node JetStream cluster with R3 streams, nodes failing one at a time', () => {
  let cluster: TestNatsCluster;
  let db: TestDatabase;
  let svc: RunningService;
  const cert = makeRsaCert();
  const remotes = [bareRepo(), bareRepo(), bareRepo()];
  const accepted: Array<{ id: string; remote: { dir: string } }> = [];
  /** The service's log (test-artifacts/): a run that does not finish is shown with what the service said of it. */
  const serviceLog = artifactPath('jetstream-cluster-service.log');
  const logLinesAbout = (runId: string) =>
    readFileSync(serviceLog, 'utf8')
      .split('\n')
      .filter((line) => line.includes(runId) || /"level":(40|50)/.test(line))
      .slice(-80);

  beforeAll(async () => {
    // The log appends: start it empty, so a failure shows this run's lines only.
    writeFileSync(serviceLog, '');
    cluster = await TestNatsCluster.start();
    db = await TestDatabase.create();
    // JetStream answers once the cluster has elected its meta leader.
    await waitFor(
      'the JetStream meta leader',
      async () => {
        const nc = await connect({ servers: cluster.nodes.map((n) => n.url) });
        try {
          await (await jetstreamManager(nc)).getAccountInfo();
          return true;
        } catch {
          return undefined;
        } finally {
          await nc.close();
        }
      },
      30_000,
    );
    svc = await startService(
      {
        NATS_URL: cluster.url,
        DATABASE_URL: db.url,
        STREAM_REPLICAS: '3',
        ACK_WAIT_SECONDS: '10',
        // nats-server 2.9 can lose a step's trigger when a consumer leader dies mid-delivery: the stall check brings
        // such a run back within the test's wait (by default it waits out the step deadline, ten minutes and more).
        STALLED_RUN_SECONDS: '45',
      },
      { logFile: serviceLog },
    );
  });
  afterAll(async () => {
    await svc?.stop();
    await cluster?.destroy();
    await db?.drop();
  });

  /** Stream info; while a stream elects a new leader its API calls time out, so asked again until it answers. */
  const streamInfo = (stream: string) =>
    waitFor(`${stream} info`, () => svc.runtime.store.jsm.streams.info(stream).catch(() => undefined), 30_000);

  /** Submits runs; a POST that meets a failover is repeated with its Idempotency-Key (as a controller would). */
  async function submit(names: string[]) {
    for (const [i, name] of names.entries()) {
      const remote = remotes[i % remotes.length];
      const created = await waitFor(`POST ${name}`, async () => {
        const r = await api(svc.base, 'POST', '/api/v1/scaffolds', createBody(name, remote.url, cert.certPem), {
          'Idempotency-Key': name,
        });
        return r.status === 202 ? r : undefined;
      });
      accepted.push({ id: created.json.id, remote });
    }
  }

  /** Stops a node, does `whileDown` (runs are also going on meanwhile), starts it again on its own store. */
  async function restart(
    node: { stop(signal?: NodeJS.Signals): Promise<void>; startProcess(): Promise<void> },
    signal: NodeJS.Signals,
    whileDown: () => Promise<unknown> = () => sleep(3000),
  ) {
    await node.stop(signal);
    await whileDown();
    await node.startProcess();
  }

  it('every accepted run ends once with two commits, no event is lost or duplicated, the projection equals a rebuild, streams stay R3', async () => {
    await submit(['c-a1', 'c-a2', 'c-a3']);
    const leader = (await streamInfo('SCAFFOLD_EVENTS')).cluster!.leader!;
    await restart(cluster.node(leader), 'SIGKILL');
    await submit(['c-b1', 'c-b2', 'c-b3']);
    const connectedTo = cluster.nodeAt(svc.runtime.store.nc.getServer());
    await restart(connectedTo, 'SIGKILL', async () => {
      // The service's connection moves to another node of NATS_URL; the API keeps accepting runs.
      await waitFor(
        'the reconnect',
        async () => (svc.runtime.store.nc.getServer().endsWith(`:${connectedTo.port}`) ? undefined : true),
        10_000,
      );
      await submit(['c-c1', 'c-c2', 'c-c3']);
    });
    const info = await waitFor('a leader with two replicas', async () =>
      (await streamInfo('SCAFFOLD_EVENTS')).cluster?.replicas?.length === 2 ? streamInfo('SCAFFOLD_EVENTS') : undefined,
    );
    const follower = info.cluster!.replicas!.find((r) => r.name !== info.cluster!.leader)!.name;
    await restart(cluster.node(follower), 'SIGTERM');

    const outcomes = await Promise.all(
      accepted.map((r) =>
        untilTerminal(svc.base, r.id, Number(process.env.CLUSTER_RUN_MS ?? 180_000)).catch(async (e) => {
          const run = await api(svc.base, 'GET', `/api/v1/scaffolds/${r.id}`);
          const consumers = await svc.runtime.store.jsm.consumers.list('SCAFFOLD_EVENTS').next();
          const stream = (await svc.runtime.store.readRun(r.id).catch(() => ({ events: [] as any[] }))).events.map(
            (ev: any) => `${ev.seq} ${ev.type}`,
          );
          console.error(
            JSON.stringify(
              {
                stream,
                run: run.json,
                log: logLinesAbout(r.id),
                consumers: consumers.map((c) => ({
                  n: c.name,
                  p: c.num_pending,
                  a: c.num_ack_pending,
                  w: c.num_waiting,
                  d: c.delivered.stream_seq,
                  f: c.ack_floor.stream_seq,
                  cl: c.cluster,
                })),
              },
              null,
              1,
            ),
          );
          throw e;
        }),
      ),
    );
    // A run that did not succeed says why (the assertion below shows only the statuses).
    for (const o of outcomes.filter((o) => o.status !== 'succeeded')) console.error(`run ${o.id}: ${o.message}`);
    expect(outcomes.map((o) => o.status)).toEqual(accepted.map(() => 'succeeded'));
    for (const r of accepted) expect(runCommits(r.remote.dir, r.id).sort()).toEqual(['full', 'infra']);

    // Exactly one of each result and one terminal event per run; no event id twice in the stream.
    const ids = new Set<string>();
    for (const r of accepted) {
      const { events } = await waitFor(`run ${r.id} read`, () =>
        svc.runtime.store.readRun(r.id).catch(() => undefined),
      );
      for (const e of events) {
        expect(ids.has(e.id)).toBe(false);
        ids.add(e.id);
      }
      const results = events.map((e) => e.type).filter((t) => SUCCEEDED_RUN_EVENTS.includes(t));
      expect(results).toEqual(SUCCEEDED_RUN_EVENTS);
    }

    await waitFor('the projection to catch up', async () => {
      const rows = await readModelRows(db.url);
      return rows.length === accepted.length && rows.every((row) => row.status === 'succeeded') ? true : undefined;
    });
    const live = await readModelRows(db.url);
    await rebuildProjection(svc.runtime.store, svc.runtime.ds);
    expect(await readModelRows(db.url)).toEqual(live);

    // Every stream is still replicated three times, and the restarted replicas have caught up.
    for (const stream of STREAMS) {
      const s = await waitFor(`${stream} replicas current`, async () => {
        const i = await streamInfo(stream);
        return i.cluster?.replicas?.length === 2 && i.cluster.replicas.every((r) => r.current) ? i : undefined;
      });
      expect(s.config.num_replicas).toBe(3);
    }
  });

  it('with EXECUTOR=kubernetes: runner Jobs report through the service while the stream leader dies, and every run ends once', async () => {
    await svc.stop();
    const management = await new FakeKube().start();
    const jobsDb = await TestDatabase.create();
    svc = await startService({
      NATS_URL: cluster.url,
      DATABASE_URL: jobsDb.url,
      STREAM_REPLICAS: '3',
      ACK_WAIT_SECONDS: '10',
      EXECUTOR: 'kubernetes',
      KUBECONFIG: management.kubeconfigFile(),
      JOB_WATCH_INTERVAL_SECONDS: '0.5',
    });
    try {
      const runs: Array<{ id: string; remote: { dir: string; url: string } }> = [];
      for (const [i, remote] of remotes.entries()) {
        const body = createBody(`c-job-${i}`, remote.url, cert.certPem);
        const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body);
        expect(created.status).toBe(202);
        runs.push({ id: created.json.id, remote });
      }
      const jobs = await Promise.all(
        runs.map(async ({ id }) => {
          await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
          return runJob(id, {
            ...(await runnerAccess(management, id, svc.base)),
            WORK_DIR: tempDir('cluster-runner'),
            GIT_ALLOWED_SCHEMES: 'file',
            REGISTRY_SERVER: 'registry.test.example.com',
            REGISTRY_USERNAME: 'job-puller',
            REGISTRY_PASSWORD: 'JobRegistryPassword-0a1b2c3d4e',
            LOG_LEVEL: 'warn',
          });
        }),
      );
      const leader = (await streamInfo('SCAFFOLD_EVENTS')).cluster!.leader!;
      await restart(cluster.node(leader), 'SIGKILL');
      const finished = await Promise.all(jobs);
      for (const job of finished) expect([job.code, job.output]).toEqual([0, expect.any(String)]);
      for (const { id, remote } of runs) {
        expect((await untilTerminal(svc.base, id, 120_000)).status).toBe('succeeded');
        expect(runCommits(remote.dir, id).sort()).toEqual(['full', 'infra']);
        const { events } = await waitFor(`run ${id} read`, () => svc.runtime.store.readRun(id).catch(() => undefined));
        expect(events.map((e) => e.type).filter((t) => t !== 'StepProgress')).toEqual(SUCCEEDED_RUN_EVENTS);
        expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
      }
    } finally {
      await svc.stop();
      svc = undefined as unknown as RunningService;
      await management.stop();
      await jobsDb.drop();
    }
  });
});
