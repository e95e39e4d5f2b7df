import { execFileSync } from 'node:child_process';
import { makeRsaCert } from '../support/certs';
import { bareRepo, TestDatabase, TestNats } from '../support/services';
import { api, RunningService, startService, waitFor } from '../support/service';
import { report } from '../support/report';
import { SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';

jest.setTimeout(180_000);

describe('two replicas against one NATS and one PostgreSQL', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let replicas: RunningService[];
  const cert = makeRsaCert();

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    // Both replicas share this test process's event loop: on a loaded CI machine the test default of a 10 s ack wait
    // can run out while a step works, and the (correct, crash-tested) redelivery is not what this test is about.
    const settings = { NATS_URL: nats.url, DATABASE_URL: db.url, ACK_WAIT_SECONDS: '30' };
    replicas = [await startService(settings), await startService(settings)];
  });
  afterAll(async () => {
    for (const r of replicas) await r.stop();
    await nats.destroy();
    await db.drop();
  });

  it('runs each step once per event: no run is processed twice', async () => {
    const RUNS = 10;
    // One repository per run: push contention (covered elsewhere) would add legitimate retries here.
    const remotes = Array.from({ length: RUNS }, () => bareRepo());
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await api(replicas[i % 2].base, 'POST', '/api/v1/scaffolds', {
        cluster_name: `replica-${i}`,
        domain: `r${i}.example.com`,
        region: 'eu-west-1',
        acme_email: 'ops@example.com',
        repo: { url: remotes[i].url, branch: 'main' },
        target: { sealing_cert_pem: cert.certPem },
      });
      ids.push(r.json.id);
    }
    for (const id of ids) {
      await waitFor(
        `run ${id}`,
        async () =>
          (await api(replicas[0].base, 'GET', `/api/v1/scaffolds/${id}`)).json.status === 'succeeded'
            ? true
            : undefined,
        120_000,
      );
    }
    for (const [i, id] of ids.entries()) {
      const items = (await api(replicas[1].base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
      const types = items.map((e: any) => e.type);
      expect(types).toEqual(SUCCEEDED_RUN_EVENTS);
      const log = (await api(replicas[0].base, 'GET', `/api/v1/scaffolds/${id}/logs`)).text;
      for (const step of ['infra-pass', 'sealed-secrets-wait', 'cert-fetch', 'full-pass'])
        expect({ log, starts: log.match(new RegExp(`\\[${step}\\] ${step} started`, 'g'))?.length }).toMatchObject({
          starts: 1,
        });
      const commits = execFileSync(
        'git',
        ['--git-dir', remotes[i].dir, 'log', '--oneline', '--fixed-strings', `--grep=Scaffold-Run: ${id}`, 'main'],
        { encoding: 'utf8' },
      )
        .trim()
        .split('\n');
      expect(commits).toHaveLength(2);
    }
    // Both replicas did step work (reported, not required: the consumers share it as they pull).
    const counts = await Promise.all(
      replicas.map(
        async (r) =>
          (await r.runtime.metrics.registry.getSingleMetricAsString('scaffold_step_duration_seconds'))
            .match(/_count\{[^}]*\} (\d+)/g)
            ?.map((m) => Number(m.split(' ').pop()))
            .reduce((a, b) => a + b, 0) ?? 0,
      ),
    );
    report(`step attempts per replica: ${counts.join(', ')}`);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(RUNS * 4);
  });
});
