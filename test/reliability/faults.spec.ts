import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { join } from 'node:path';
import { Client } from 'pg';
import { makeRsaCert } from '../support/certs';
import { bareRepo, readModelRows, freePort, TestDatabase, TestNats } from '../support/services';
import { api, RunningService, startService, untilTerminal, waitFor } from '../support/service';

jest.setTimeout(240_000);

const runCommits = (gitDir: string, runId: string) =>
  execFileSync(
    'git',
    ['--git-dir', gitDir, 'log', '--oneline', '--fixed-strings', `--grep=Scaffold-Run: ${runId}`, 'main'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .filter(Boolean).length;

describe('faults: NATS restart, PostgreSQL outage, git failures', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let svc: RunningService;
  const cert = makeRsaCert();
  const body = (cluster: string, url: string, branch = 'main') => ({
    cluster_name: cluster,
    domain: `${cluster}.example.com`,
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url, branch },
    target: { sealing_cert_pem: cert.certPem },
  });
  const terminal = (id: string, ms = 120_000) => untilTerminal(svc.base, id, ms);
  const admin = async (q: string) => {
    const c = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await c.connect();
    await c.query(q);
    await c.end();
  };
  const rows = () => readModelRows(db.url);

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    svc = await startService({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      GIT_ALLOWED_SCHEMES: 'http,https,ssh,file',
      ACK_WAIT_SECONDS: '5',
    });
  });
  afterAll(async () => {
    await svc.stop();
    await nats.destroy();
    await admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await db.drop();
  });

  it('restarting nats-server in the middle of runs loses nothing', async () => {
    const remotes = [bareRepo(), bareRepo(), bareRepo()];
    const ids: string[] = [];
    for (const [i, r] of remotes.entries())
      ids.push((await api(svc.base, 'POST', '/api/v1/scaffolds', body(`natsr-${i}`, r.url))).json.id);
    await new Promise((r) => setTimeout(r, 700));
    await nats.stop();
    await new Promise((r) => setTimeout(r, 1500));
    await nats.startProcess();
    const outcomes = await Promise.all(ids.map((id) => terminal(id)));
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    ids.forEach((id, i) => expect(runCommits(remotes[i].dir, id)).toBe(2));
  });

  it('while PostgreSQL refuses connections: lists answer 503 and a run the replica followed from its start answers from memory, runs go on, the projection catches up and equals a rebuild', async () => {
    const remote = bareRepo();
    await admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}'`);
    try {
      const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body('pgdown', remote.url));
      expect(created.status).toBe(202);
      const list = await api(svc.base, 'GET', '/api/v1/scaffolds');
      expect(list.status).toBe(503);
      expect(list.json.error).toEqual({
        code: 'read_model_unavailable',
        message: 'PostgreSQL (the read-model) is not answering',
      });
      const health = await fetch(`${svc.base}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ status: 'degraded', nats: 'up', postgres: 'down' });
      // Readiness drops the replica from the Service; liveness stays up, so Kubernetes restarts nothing.
      expect((await fetch(`${svc.base}/readyz`)).status).toBe(503);
      expect((await fetch(`${svc.base}/livez`)).status).toBe(200);
      // The run itself needs no PostgreSQL: its events keep being appended.
      await waitFor('the run to finish in the stream', async () => {
        const { events } = await svc.runtime.store.readRun(created.json.id);
        return events.some((e) => e.type === 'ScaffoldSucceeded') ? true : undefined;
      });
      expect(runCommits(remote.dir, created.json.id)).toBe(2);
      // The replica followed this run from its first event: its GET needs no PostgreSQL.
      const view = await waitFor('the replica to have followed the run to its end', async () => {
        const got = await api(svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}`);
        return got.json?.status === 'succeeded' ? got : undefined;
      });
      expect(view.status).toBe(200);
    } finally {
      await admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    }
    await waitFor('the projection to catch up', async () =>
      (await api(svc.base, 'GET', '/api/v1/scaffolds?status=succeeded')).json?.items?.some(
        (i: any) => i.cluster_name === 'pgdown',
      )
        ? true
        : undefined,
    );
    const live = await rows();
    const { rebuildProjection } = await import('../../src/projection/rebuild');
    await rebuildProjection(svc.runtime.store, svc.runtime.ds);
    expect(await rows()).toEqual(live);
    // Memory-bounded: one run held at a time and two events per read, so runs are written and read back again and again.
    await rebuildProjection(svc.runtime.store, svc.runtime.ds, { pageSize: 2, memoryRuns: 1 });
    expect(await rows()).toEqual(live);
  });

  it('a push rejected because the branch moved is rebased onto the new head and pushed again', async () => {
    const remote = bareRepo();
    // The first push is refused as if another writer had moved the branch; later pushes go through.
    const hook = join(remote.dir, 'hooks', 'pre-receive');
    writeFileSync(
      hook,
      `#!/bin/sh\nif [ ! -f "${remote.dir}/moved" ]; then touch "${remote.dir}/moved"; echo "branch moved" >&2; exit 1; fi\nexit 0\n`,
    );
    chmodSync(hook, 0o755);
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body('moved', remote.url));
    const done = await terminal(created.json.id);
    expect(done.status).toBe('succeeded');
    expect(runCommits(remote.dir, created.json.id)).toBe(2);
    const log = (await api(svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/logs`)).text;
    expect(log).toMatch(/push rejected .*; rebasing onto the new head and pushing again/);
  });

  it.each([
    [
      'a repository without the branch',
      async () => ({ url: bareRepo().url, branch: 'release' }),
      /infra-pass failed: the branch does not exist on the remote/,
      1,
    ],
    [
      'a repository that does not exist',
      async () => ({ url: 'file:///nonexistent/platform.git', branch: 'main' }),
      /infra-pass failed: repository not found/,
      1,
    ],
  ])('%s fails at once with a clear reason', async (_what, target, reason, attempts) => {
    const { url, branch } = await target();
    const created = await api(
      svc.base,
      'POST',
      '/api/v1/scaffolds',
      body(`gitf-${attempts}-${Math.random().toString(36).slice(2, 6)}`, url, branch),
    );
    const done = await terminal(created.json.id);
    expect(done.status).toBe('failed');
    expect(done.message).toMatch(reason);
    const failures = (await api(svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items.filter(
      (e: any) => e.type === 'StepFailed',
    );
    expect(failures).toHaveLength(attempts);
    expect(failures[0].data.will_retry).toBe(false);
  });

  it('authentication refused by the remote fails at once, without a prompt', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
      res.end('Unauthorized');
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    try {
      const created = await api(
        svc.base,
        'POST',
        '/api/v1/scaffolds',
        body('authfail', `http://127.0.0.1:${port}/platform.git`),
      );
      const done = await terminal(created.json.id);
      expect(done.status).toBe('failed');
      expect(done.message).toMatch(/infra-pass failed: authentication refused/);
      const failures = (await api(svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items.filter(
        (e: any) => e.type === 'StepFailed',
      );
      expect(failures).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it('an unreachable remote is retried with backoff, then fails with the reason', async () => {
    const port = await freePort();
    const created = await api(
      svc.base,
      'POST',
      '/api/v1/scaffolds',
      body('unreach', `https://127.0.0.1:${port}/platform.git`),
    );
    const done = await terminal(created.json.id, 180_000);
    expect(done.status).toBe('failed');
    expect(done.message).toMatch(
      /infra-pass failed: git failed: .*(Failed to connect|Could not connect|Connection refused)/i,
    );
    const failures = (await api(svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items.filter(
      (e: any) => e.type === 'StepFailed',
    );
    expect(failures.map((f: any) => f.data.will_retry)).toEqual([true, true, true, true, false]);
  });
});
