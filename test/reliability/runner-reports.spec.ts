import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobNameFor } from '#libs/kube';
import { makeRsaCert } from '../support/certs';
import { FailoverProxy } from '../support/failover-proxy';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { report } from '../support/report';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { runJob, runnerAccess } from '../support/runner-job';
import { api, untilTerminal, waitFor } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { bareRepo, runCommits, TestDatabase, TestNats } from '../support/services';

jest.setTimeout(300_000);

/** A remote whose pushes take a second (a pre-receive hook), so kills land while steps push and report. */
function slowRemote() {
  const remote = bareRepo();
  const hook = join(remote.dir, 'hooks', 'pre-receive');
  writeFileSync(hook, '#!/bin/sh\ncat >/dev/null\nsleep 1\n');
  chmodSync(hook, 0o755);
  return remote;
}

describe('Jobs report through the service (#28): kills of the service or of a runner lose nothing and double nothing', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let management: FakeKube;
  let svc: ServiceProcess;
  const cert = makeRsaCert();

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    svc = await ServiceProcess.create({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      EXECUTOR: 'kubernetes',
      KUBECONFIG: management.kubeconfigFile(),
      JOB_WATCH_INTERVAL_SECONDS: '0.5',
    });
  });
  afterAll(async () => {
    if (svc.running) await svc.kill();
    await management.stop();
    await nats.destroy();
    await db.drop();
  });

  const runnerEnv = async (id: string, extra: Record<string, string> = {}) => ({
    ...(await runnerAccess(management, id, svc.base)),
    KUBECONFIG: management.kubeconfigFile(),
    WORK_DIR: tempDir('reporting-runner'),
    GIT_ALLOWED_SCHEMES: 'file',
    REGISTRY_SERVER: 'registry.test.example.com',
    REGISTRY_USERNAME: 'job-puller',
    REGISTRY_PASSWORD: 'JobRegistryPassword-0a1b2c3d4e',
    LOG_LEVEL: 'warn',
    ...extra,
  });

  async function submit(cluster: string, url: string): Promise<string> {
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', createBody(cluster, url, cert.certPem));
    expect(created.status).toBe(202);
    await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(created.json.id)}`));
    return created.json.id;
  }

  async function expectSucceededOnce(id: string, gitDir: string) {
    const done = await untilTerminal(svc.base, id, 120_000);
    expect(done.status).toBe('succeeded');
    expect(runCommits(gitDir, id).sort()).toEqual(['full', 'infra']);
    const events = (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
    const types = events.map((e: any) => e.type).filter((t: string) => t !== 'StepProgress');
    expect(types).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(new Set(events.map((e: any) => e.id)).size).toBe(events.length);
  }

  it('SIGKILL of the service while runners push and report, restarted: the runners retry their reports and every run ends once', async () => {
    await svc.start();
    const remotes = [slowRemote(), slowRemote(), slowRemote()];
    const ids: string[] = [];
    for (const [i, remote] of remotes.entries()) ids.push(await submit(`reporting-${i}`, remote.url));
    const envs = await Promise.all(ids.map((id) => runnerEnv(id)));
    const jobs = ids.map((id, i) => runJob(id, envs[i]));
    const outages: number[] = [];
    for (const pause of [800, 1700, 1200]) {
      await new Promise((r) => setTimeout(r, pause));
      await svc.kill('SIGKILL');
      const down = Date.now();
      await new Promise((r) => setTimeout(r, 700));
      await svc.start();
      outages.push(Date.now() - down);
    }
    const finished = await Promise.all(jobs);
    for (const job of finished) expect([job.code, job.output]).toEqual([0, expect.any(String)]);
    // The kills landed while the runners were talking to the service: they sent requests again.
    const retried = finished.filter((job) => job.output.includes('sending the same request again')).length;
    expect(retried).toBeGreaterThan(0);
    for (const [i, id] of ids.entries()) await expectSucceededOnce(id, remotes[i].dir);
    report(
      `runner reports across 3 service kills (outages ${outages.join(', ')} ms): 3 runs each once, ${retried} runners retried`,
    );
    await svc.kill('SIGTERM');
  });

  it('two replicas behind one address, one killed while runners report: the runners go on through the other', async () => {
    const replica = await ServiceProcess.create({ ...svc.env, WORK_DIR: tempDir('replica-work') });
    await svc.start();
    await replica.start();
    const proxy = await FailoverProxy.start([svc.port, replica.port]);
    try {
      const remotes = [slowRemote(), slowRemote(), slowRemote()];
      const ids: string[] = [];
      for (const [i, remote] of remotes.entries()) ids.push(await submit(`replica-${i}`, remote.url));
      const envs = await Promise.all(ids.map((id) => runnerEnv(id, { SCAFFOLDER_URL: proxy.url })));
      const jobs = ids.map((id, i) => runJob(id, envs[i]));
      await new Promise((r) => setTimeout(r, 1500));
      await svc.kill('SIGKILL');
      const finished = await Promise.all(jobs);
      for (const job of finished) expect([job.code, job.output]).toEqual([0, expect.any(String)]);
      await svc.start();
      for (const [i, id] of ids.entries()) await expectSucceededOnce(id, remotes[i].dir);
      report('runner reports through two replicas behind one address, one killed mid-run: 3 runs each once');
    } finally {
      await proxy.stop();
      if (replica.running) await replica.kill('SIGTERM');
      if (svc.running) await svc.kill('SIGTERM');
    }
  });

  it.each(['after-push:infra', 'after-append:infra-pass', 'after-push:full'])(
    'a runner killed at %s and started again (the Job restarts its pod) finishes without a second push',
    async (point) => {
      await svc.start();
      const remote = slowRemote();
      const id = await submit(`runner-crash-${point.replace(/[^a-z]/g, '')}`, remote.url);
      const crashed = await runJob(id, await runnerEnv(id, { SCAFFOLDER_CRASH_AT: point }));
      expect(crashed.code).toBeNull();
      const again = await runJob(id, await runnerEnv(id));
      expect(again.code).toBe(0);
      await expectSucceededOnce(id, remote.dir);
      await svc.kill('SIGTERM');
    },
  );
});
