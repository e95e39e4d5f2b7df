import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { bareRepo, runCommits, TestDatabase, TestNats } from '../support/services';
import { api, untilTerminal, waitFor } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { report } from '../support/report';

jest.setTimeout(180_000);

/** A remote whose pushes take `seconds` (a pre-receive hook), so a SIGTERM can land while a step pushes. */
function slowRemote(seconds: number) {
  const remote = bareRepo();
  const hook = join(remote.dir, 'hooks', 'pre-receive');
  writeFileSync(hook, `#!/bin/sh\ncat >/dev/null\nsleep ${seconds}\n`);
  chmodSync(hook, 0o755);
  return remote;
}

describe('SIGTERM: the service stops cleanly (exit 0, a "stopped" line) and no run is lost or pushed twice', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let svc: ServiceProcess;
  const cert = makeRsaCert();
  const body = (cluster: string, url: string) => createBody(cluster, url, cert.certPem);
  const logOf = async (id: string) => (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`)).text;
  const events = async (id: string) =>
    (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items.map((e: any) => e.type);

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    svc = await ServiceProcess.create({ NATS_URL: nats.url, DATABASE_URL: db.url, ACK_WAIT_SECONDS: '30' });
  });
  afterAll(async () => {
    if (svc.running) await svc.kill();
    await nats.destroy();
    await db.drop();
  });

  /** Starts a run on a slow remote and sends SIGTERM while its infra pass is pushing; returns the run id. */
  async function terminateDuringInfraPass(cluster: string, remote: { url: string }, settings: Record<string, string>) {
    await svc.start(settings);
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body(cluster, remote.url));
    expect(created.status).toBe(202);
    await waitFor('infra pass to start', async () =>
      (await logOf(created.json.id)).includes('infra-pass started') ? true : undefined,
    );
    const signalled = Date.now();
    await svc.kill('SIGTERM');
    return { id: created.json.id as string, stopMs: Date.now() - signalled };
  }

  async function expectFinishedOnce(id: string, gitDir: string) {
    await svc.start();
    const done = await untilTerminal(svc.base, id, 90_000);
    expect(done.status).toBe('succeeded');
    expect(runCommits(gitDir, id).sort()).toEqual(['full', 'infra']);
    const types = await events(id);
    expect(types.filter((t: string) => t === 'ScaffoldSucceeded')).toHaveLength(1);
    expect(types.filter((t: string) => t === 'InfraPushed')).toHaveLength(1);
    await svc.kill('SIGTERM');
  }

  it('lets an in-flight step finish within the grace period, then exits 0', async () => {
    const remote = slowRemote(2);
    // A grace no loaded machine runs out of (the default 25 s did, beside another full test run): what is tested is
    // that the process waits for the step, not how fast the step is.
    const { id, stopMs } = await terminateDuringInfraPass('term-finish', remote, { SHUTDOWN_GRACE_SECONDS: '120' });
    expect(svc.exits.at(-1)).toBe(0);
    expect(svc.output).toMatch(/"msg":"gitops-scaffolder stopped"/);
    // The infra pass finished before the process went: its commit is there although the process is gone. (Whether
    // another consumer had already fetched the next step's trigger, and handed that back, is a race of the machine's
    // speed: "handed_back" is not asserted here.)
    expect(runCommits(remote.dir, id)).toEqual(['infra']);
    report(`SIGTERM during a 2 s push: stopped in ${stopMs} ms, step finished first`);
    await expectFinishedOnce(id, remote.dir);
  });

  it('hands an in-flight step back when the grace period runs out, and the next process completes the run without a second push', async () => {
    const remote = slowRemote(6);
    const { id, stopMs } = await terminateDuringInfraPass('term-handback', remote, { SHUTDOWN_GRACE_SECONDS: '1' });
    expect(svc.exits.at(-1)).toBe(0);
    // The step's event at least; another consumer's batch may be in flight beside it on a busy machine.
    expect(svc.output).toMatch(/"handed_back":[1-9]/);
    expect(svc.output).toMatch(/"msg":"gitops-scaffolder stopped"/);
    expect(stopMs).toBeLessThan(6000);
    report(`SIGTERM during a 6 s push with a 1 s grace: stopped in ${stopMs} ms, step handed back`);
    await expectFinishedOnce(id, remote.dir);
  });
});
