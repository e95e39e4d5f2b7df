import { memoryCgroup } from '../../bench/measure';
import { makeRsaCert } from '../support/certs';
import { report } from '../support/report';
import { createBody } from '../support/run-fixtures';
import { api, untilTerminal } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { bareRepo, freePort, runCommits, TestDatabase, TestNats } from '../support/services';

jest.setTimeout(600_000);

const MAX_STEP_CRASHES = 3;
/** The pod's memory limit in the incident (issue #47). */
const POD_LIMIT_MIB = 512;
/** ServiceProcess's ACK_WAIT_SECONDS: a delivery of a dead process comes back this long after its last keep-alive. */
const ACK_WAIT_MS = 4000;
const PARKED = 'the step crashed the service 3 times; parked';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue #47: a step that took the service's memory until the kernel killed it was redelivered after every restart and
 * killed the service again, for ever. Here the infra pass does the same (the `memory:` crash point: buffers until the
 * OOM killer of a 512 MiB memory cgroup ends the process) and the service is restarted after each death as a pod is.
 */
describe('poison steps: a step that kills the service is parked after MAX_STEP_CRASHES crashes', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let svc: ServiceProcess;
  let cgroup: ReturnType<typeof memoryCgroup> | undefined;
  const cert = makeRsaCert();
  const create = async (cluster: string, url: string) => {
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', createBody(cluster, url, cert.certPem));
    expect(created.status).toBe(202);
    return created.json.id as string;
  };
  const eventsOf = async (id: string) => (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
  const metric = async (name: string, step: string) => {
    const text = await (await fetch(`${svc.base}/metrics`)).text();
    return Number(new RegExp(`^${name}\\{step="${step}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    try {
      cgroup = memoryCgroup(POD_LIMIT_MIB, 'poison-steps');
    } catch (e) {
      // Not root, or no memory controller: the crash point then stops itself at 4 GiB with SIGKILL.
      report(`poison steps: no ${POD_LIMIT_MIB} MiB memory cgroup (${e}); the step kills the service without one`);
    }
    svc = await ServiceProcess.create(
      { NATS_URL: nats.url, DATABASE_URL: db.url, MAX_STEP_CRASHES: String(MAX_STEP_CRASHES) },
      [],
      cgroup?.procs,
    );
  });
  afterAll(async () => {
    if (svc.running) await svc.kill();
    await cgroup?.remove();
    await nats.destroy();
    await db.drop();
  });

  it('an infra pass that runs the service out of memory kills it 3 times; then the run fails with the reason and nothing comes back', async () => {
    const remote = bareRepo();
    const poisoned = { SCAFFOLDER_CRASH_AT: 'memory:before-step:infra-pass' };
    await svc.start(poisoned);
    const started = Date.now();
    const id = await create('poisoned', remote.url);
    for (let crash = 1; crash <= MAX_STEP_CRASHES; crash++) {
      await svc.exited(180_000);
      expect(svc.exits).toEqual(Array(crash).fill('SIGKILL'));
      // Restarted as a pod is, the poison still in place: the step's delivery comes back (at once when its ack wait
      // has passed) and may kill the service again before it answers /health; after the last crash it must not.
      await svc.start(poisoned).catch((e) => {
        if (crash === MAX_STEP_CRASHES || svc.running) throw e;
      });
    }
    const run = await untilTerminal(svc.base, id, 120_000);
    const parkedAfterS = (Date.now() - started) / 1000;
    expect(run.status).toBe('failed');
    expect(run.message).toBe(`infra-pass failed: ${PARKED}`);

    // Never delivered again: three ack waits later the service still runs and the run has no new event.
    const events = await eventsOf(id);
    await sleep(3 * ACK_WAIT_MS + 1000);
    expect(svc.running).toBe(true);
    expect(svc.exits).toHaveLength(MAX_STEP_CRASHES);
    expect(await eventsOf(id)).toEqual(events);
    expect(events.map((e: any) => e.type)).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
    expect(events[1].data).toEqual({ step: 'infra-pass', attempt: 1, reason: PARKED, will_retry: false });
    expect(runCommits(remote.dir, id)).toEqual([]);
    // This process found the last crash and parked the step (each earlier one found its predecessor's, then died).
    expect(await metric('scaffold_step_crashes_total', 'infra-pass')).toBe(1);
    expect(await metric('scaffold_steps_parked_total', 'infra-pass')).toBe(1);
    if (cgroup) expect(cgroup.oomKills()).toBe(MAX_STEP_CRASHES);
    report(
      `poison steps: ${JSON.stringify({
        memory_limit_mib: cgroup ? POD_LIMIT_MIB : null,
        oom_kills: cgroup?.oomKills() ?? null,
        exits: svc.exits,
        parked_after_s: parkedAfterS,
      })}`,
    );
    await svc.kill('SIGTERM');
  });

  it('a step failing deliberately more often than MAX_STEP_CRASHES is retried every time and fails with its own reason', async () => {
    await svc.start({ MAX_STEP_CRASHES: '1' });
    const id = await create('unreachable', `https://127.0.0.1:${await freePort()}/platform.git`);
    const run = await untilTerminal(svc.base, id, 180_000);
    expect(run.status).toBe('failed');
    expect(run.message).toMatch(/^infra-pass failed: git failed: /);
    const failures = (await eventsOf(id)).filter((e: any) => e.type === 'StepFailed').map((e: any) => e.data);
    expect(failures.map((f: any) => f.will_retry)).toEqual([true, true, true, true, false]);
    expect(failures.map((f: any) => f.reason)).not.toContain(PARKED);
    expect(await metric('scaffold_step_crashes_total', 'infra-pass')).toBe(0);
    await svc.kill('SIGTERM');
  });
});
