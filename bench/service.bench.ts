/**
 * One run end to end, paired with plain tools doing the same work: BENCH_PAIRS (10) times, alternating,
 * a run through the service (POST → ScaffoldSucceeded, validation on, file:// remote) and the same
 * git and kustomize work by hand (clone, write the infra layers, `kubectl kustomize` each, commit,
 * push; clone, write the rest, `kubectl kustomize` all five layers, commit, push). Prints the medians,
 * their ratio, where the service's time goes (each step's own time and the hand-offs between steps:
 * triggering event appended → step starts) and GET status latency on the idle service.
 * Run: npm run bench:service (a test-owned nats-server and database).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { RUN_PLANS } from '#libs/events';
import { makeRsaCert } from '../test/support/certs';
import { bareRepo, TestDatabase, TestNats } from '../test/support/services';
import { createBody } from '../test/support/run-fixtures';
import { api, API_KEY, startService, untilTerminal } from '../test/support/service';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 10);
const GETS = Number(process.env.BENCH_GETS ?? 500);
const FLUX_URL = process.env.BENCH_FLUX_URL ?? 'https://git.example.com/platform/fleet.git';
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

const INFRA_LAYERS = ['flux-system', 'infrastructure'];
const ALL_LAYERS = ['flux-system', 'infrastructure', 'apps', 'database', 'cert-manager-config'];
/** A sealing run's steps in order, from the run plan: the event that starts each (the step before's result) and ends it. */
const PLAN_STEPS = RUN_PLANS.scaffold.steps;
const TRIGGERS: Record<string, string> = Object.fromEntries(
  PLAN_STEPS.map((s, i) => [s.name, i === 0 ? RUN_PLANS.scaffold.start : PLAN_STEPS[i - 1].result]),
);
const RESULTS: Record<string, string> = Object.fromEntries(PLAN_STEPS.map((s) => [s.name, s.result]));

/** The same work as one run, by hand, layer by layer as a person's script would. */
function plainTools(remoteDir: string, tree: string, cluster: string): number {
  const start = process.hrtime.bigint();
  const git = (cwd: string, ...a: string[]) =>
    execFileSync('git', ['-C', cwd, '-c', 'user.name=b', '-c', 'user.email=b@x', ...a], { stdio: 'ignore' });
  for (const layers of [INFRA_LAYERS, ALL_LAYERS]) {
    const wc = mkdtempSync(join(tmpdir(), 'plain-'));
    execFileSync('git', ['clone', '-q', '--branch', 'main', '--single-branch', remoteDir, wc]);
    for (const l of layers) cpSync(join(tree, l), join(wc, 'clusters', cluster, l), { recursive: true });
    for (const l of layers)
      execFileSync('kubectl', ['kustomize', join(wc, 'clusters', cluster, l)], { stdio: 'ignore' });
    git(wc, 'add', '-A');
    git(wc, 'commit', '-q', '-m', `${cluster}`);
    git(wc, 'push', '-q', 'origin', 'HEAD:main');
    rmSync(wc, { recursive: true, force: true });
  }
  return ms(start);
}

interface RunTiming {
  total: number;
  steps: Record<string, number>;
  handoffs: number[];
}

/** From the run's events and log: each step's own time (start → its result appended) and every hand-off. */
async function runTiming(base: string, id: string, postedAt: number): Promise<RunTiming> {
  const events: Array<{ type: string; time: string }> = (await api(base, 'GET', `/api/v1/scaffolds/${id}/events`)).json
    .items;
  const log: string = (await api(base, 'GET', `/api/v1/scaffolds/${id}/logs`)).text;
  const appended = (type: string) => Date.parse(events.find((e) => e.type === type)!.time);
  const steps: Record<string, number> = {};
  const handoffs: number[] = [];
  for (const m of log.matchAll(/^(\S+) INFO \[(\S+)\] \S+ started \(delivery 1\)$/gm)) {
    const [, time, step] = m;
    const startedAt = Date.parse(time);
    handoffs.push(startedAt - appended(TRIGGERS[step]));
    steps[step] = appended(RESULTS[step]) - startedAt;
  }
  return { total: appended('ScaffoldSucceeded') - postedAt, steps, handoffs };
}

/**
 * A run's request as production sends it: the service pushes to a file:// remote here, so the request
 * also names the URL Flux reads (repo.flux_url), as a controller whose push URL Flux cannot fetch
 * does. Without it every pass warns that Flux cannot fetch file://, and a pass that warns builds its
 * layers a second time to name the file in the warning: a cost of this benchmark's remote, not of a run.
 * BENCH_FLUX_URL= (empty) measures requests without it.
 */
function benchBody(cluster: string, remoteUrl: string, certPem: string) {
  const body = createBody(cluster, remoteUrl, certPem);
  return FLUX_URL ? { ...body, repo: { ...body.repo, flux_url: FLUX_URL } } : body;
}

async function main() {
  const nats = await TestNats.start();
  const db = await TestDatabase.create();
  const svc = await startService({ NATS_URL: nats.url, DATABASE_URL: db.url, STEP_CONCURRENCY: '4' });
  const nc = await connect({ servers: nats.url });
  const cert = makeRsaCert({ bits: 4096 });
  const remote = bareRepo();
  try {
    // A first run gives the plain tools the tree to write (the baseline measures git and kustomize, not generation).
    const first = await api(svc.base, 'POST', '/api/v1/scaffolds', benchBody('warmup', remote.url, cert.certPem));
    await untilTerminal(svc.base, first.json.id, 120_000);
    const tree = mkdtempSync(join(tmpdir(), 'tree-'));
    execFileSync('git', ['clone', '-q', remote.dir, tree]);
    const layers = join(tree, 'clusters/warmup');
    // The plain tools push into a copy of the fleet as the warm-up left it (with the shared base it copied in).
    const plainRemote = { dir: join(mkdtempSync(join(tmpdir(), 'plain-remote-')), 'fleet.git') };
    execFileSync('git', ['clone', '-q', '--bare', remote.dir, plainRemote.dir]);

    const service: RunTiming[] = [];
    const plain: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      const postedAt = Date.now();
      const r = await api(svc.base, 'POST', '/api/v1/scaffolds', benchBody(`bench-${i}`, remote.url, cert.certPem));
      const done = await untilTerminal(svc.base, r.json.id, 120_000);
      if (done.status !== 'succeeded') throw new Error(`run ${r.json.id} ${done.status}: ${done.message}`);
      service.push(await runTiming(svc.base, r.json.id, postedAt));
      plain.push(plainTools(plainRemote.dir, layers, `plain-${i}`));
    }

    const restTimes: number[] = [];
    const natsTimes: number[] = [];
    const h = headers();
    h.set('X-Api-Key', API_KEY);
    for (let i = 0; i < GETS; i++) {
      let s = process.hrtime.bigint();
      await api(svc.base, 'GET', `/api/v1/scaffolds/${first.json.id}`);
      restTimes.push(ms(s));
      s = process.hrtime.bigint();
      await nc.request('scaffolds.v1.get', JSON.stringify({ id: first.json.id }), { headers: h, timeout: 5000 });
      natsTimes.push(ms(s));
    }
    const totals = service.map((t) => t.total);
    const handoffs = service.flatMap((t) => t.handoffs);
    const stepMedians = Object.fromEntries(
      Object.keys(TRIGGERS).map((step) => [
        step,
        Math.round(
          pct(
            service.map((t) => t.steps[step]),
            50,
          ),
        ),
      ]),
    );
    console.log(
      JSON.stringify(
        {
          pairs: PAIRS,
          run_end_to_end_ms: { p50: Math.round(pct(totals, 50)), max: Math.round(Math.max(...totals)) },
          plain_git_and_kustomize_same_work_ms: {
            p50: Math.round(pct(plain, 50)),
            max: Math.round(Math.max(...plain)),
          },
          ratio_service_to_plain_tools: round(pct(totals, 50) / pct(plain, 50), 2),
          step_own_time_ms_p50: stepMedians,
          handoff_ms: { p50: round(pct(handoffs, 50)), p99: round(pct(handoffs, 99)), n: handoffs.length },
          get_status_idle_ms: {
            rest: { p50: round(pct(restTimes, 50), 2), p99: round(pct(restTimes, 99), 2) },
            nats: { p50: round(pct(natsTimes, 50), 2), p99: round(pct(natsTimes, 99), 2) },
            samples: GETS,
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await nc.close();
    await svc.stop();
    await nats.destroy();
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
