import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { bareRepo, runCommits, TestDatabase, TestNats } from '../support/services';
import { api, untilTerminal } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { report } from '../support/report';

jest.setTimeout(300_000);

describe('SIGKILL at every step boundary and inside steps: every run completes with two commits and one terminal event', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let svc: ServiceProcess;
  const cert = makeRsaCert();
  const body = (cluster: string, url: string) => createBody(cluster, url, cert.certPem);
  const terminal = (id: string, ms = 90_000) => untilTerminal(svc.base, id, ms);
  const terminalEvents = async (id: string) =>
    (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items.filter((e: any) =>
      ['ScaffoldSucceeded', 'ScaffoldFailed', 'ScaffoldCancelled'].includes(e.type),
    ).length;

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    // The kills here are the test's, not the steps': the random ones may hit one step of a run more often than the
    // default MAX_STEP_CRASHES, which would park it (test/reliability/poison-steps.spec.ts).
    svc = await ServiceProcess.create({ NATS_URL: nats.url, DATABASE_URL: db.url, MAX_STEP_CRASHES: '100' });
  });
  afterAll(async () => {
    if (svc.running) await svc.kill();
    await nats.destroy();
    await db.drop();
  });

  const POINTS = [
    'before-step:infra-pass',
    'after-push:infra',
    'after-append:infra-pass',
    'after-append:sealed-secrets-wait',
    'after-append:cert-fetch',
    'before-step:full-pass',
    'after-push:full',
    'after-append:full-pass',
  ];

  it.each(POINTS)('killed at %s', async (point) => {
    const remote = bareRepo();
    await svc.start({ SCAFFOLDER_CRASH_AT: point });
    const created = await api(
      svc.base,
      'POST',
      '/api/v1/scaffolds',
      body(`crash-${POINTS.indexOf(point)}`, remote.url),
    );
    expect(created.status).toBe(202);
    await svc.exited();
    expect(svc.exits[svc.exits.length - 1]).toBe('SIGKILL');
    await svc.start();
    const done = await terminal(created.json.id);
    expect(done.status).toBe('succeeded');
    expect(runCommits(remote.dir, created.json.id).sort()).toEqual(['full', 'infra']);
    expect(await terminalEvents(created.json.id)).toBe(1);
    await svc.kill('SIGTERM');
  });

  it('many runs, killed at random moments and restarted, all end once with two commits each', async () => {
    const RUNS = 8;
    const KILLS = 4;
    const remotes = Array.from({ length: 4 }, () => bareRepo());
    await svc.start();
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++)
      ids.push(
        (await api(svc.base, 'POST', '/api/v1/scaffolds', body(`random-${i}`, remotes[i % remotes.length].url))).json
          .id,
      );
    const delays: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const delay = 200 + Math.floor(Math.random() * 2500);
      delays.push(delay);
      await new Promise((r) => setTimeout(r, delay));
      await svc.kill();
      await svc.start();
    }
    const outcomes = await Promise.all(ids.map((id) => terminal(id, 180_000)));
    const commits = ids.map((id, i) => runCommits(remotes[i % remotes.length].dir, id).length);
    const terminals = await Promise.all(ids.map(terminalEvents));
    const counts = {
      runs: RUNS,
      kills: KILLS,
      kill_delays_ms: delays,
      succeeded: outcomes.filter((o) => o.status === 'succeeded').length,
      with_two_commits: commits.filter((c) => c === 2).length,
      with_one_terminal_event: terminals.filter((t) => t === 1).length,
      failures: outcomes.filter((o) => o.status !== 'succeeded').map((o) => o.message),
    };
    report(`crash soak: ${JSON.stringify(counts)}`);
    expect(counts).toMatchObject({ succeeded: RUNS, with_two_commits: RUNS, with_one_terminal_event: RUNS });
    await svc.kill('SIGTERM');
  });
});
