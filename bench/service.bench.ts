/**
 * End-to-end run time against the same git work done by plain git commands, and p50/p99 of GET
 * status over REST and NATS. Run: npm run bench:service (a test-owned nats-server and database).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { makeRsaCert } from '../test/support/certs';
import { bareRepo, TestDatabase, TestNats } from '../test/support/services';
import { api, API_KEY, startService, waitFor } from '../test/support/service';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const GETS = Number(process.env.BENCH_GETS ?? 500);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** The same git work as one run, by hand: clone, write the infra tree, commit, push; clone, write the rest, commit, push. */
function plainGit(remoteDir: string, treeFrom: string, cluster: string): number {
  const start = process.hrtime.bigint();
  const git = (cwd: string, ...a: string[]) => execFileSync('git', ['-C', cwd, '-c', 'user.name=b', '-c', 'user.email=b@x', ...a], { stdio: 'ignore' });
  for (const pass of ['infra', 'full']) {
    const wc = mkdtempSync(join(tmpdir(), 'plain-'));
    execFileSync('git', ['clone', '-q', '--branch', 'main', '--single-branch', remoteDir, wc]);
    const layers = pass === 'infra' ? ['flux-system', 'infrastructure'] : ['apps', 'database', 'cert-manager-config'];
    for (const l of layers) cpSync(join(treeFrom, 'clusters/demo', l), join(wc, 'clusters', cluster, l), { recursive: true });
    git(wc, 'add', '-A');
    git(wc, 'commit', '-q', '-m', `${pass} ${cluster}`);
    git(wc, 'push', '-q', 'origin', 'HEAD:main');
    rmSync(wc, { recursive: true, force: true });
  }
  return ms(start);
}

async function main() {
  const nats = await TestNats.start();
  const db = await TestDatabase.create();
  const svc = await startService({ NATS_URL: nats.url, DATABASE_URL: db.url, STEP_CONCURRENCY: '4' });
  const nc = await connect({ servers: nats.url });
  const cert = makeRsaCert({ bits: 4096 });
  const remote = bareRepo();
  try {
    const runTimes: number[] = [];
    let lastId = '';
    for (let i = 0; i < RUNS; i++) {
      const start = process.hrtime.bigint();
      const r = await api(svc.base, 'POST', '/api/v1/scaffolds', {
        cluster_name: `bench-${i}`,
        domain: `b${i}.example.com`,
        region: 'eu-west-1',
        acme_email: 'ops@example.com',
        repo: { url: remote.url, branch: 'main' },
        target: { sealing_cert_pem: cert.certPem },
      });
      lastId = r.json.id;
      await waitFor('run', async () => ((await api(svc.base, 'GET', `/api/v1/scaffolds/${lastId}`)).json.status === 'succeeded' ? true : undefined), 120_000);
      runTimes.push(ms(start));
    }
    // The baseline reuses a generated tree, so it measures only what git itself costs.
    const tree = mkdtempSync(join(tmpdir(), 'tree-'));
    execFileSync('git', ['clone', '-q', remote.dir, tree]);
    execFileSync('git', ['-C', tree, 'mv', 'clusters/bench-0', 'clusters/demo']);
    const plainRemote = bareRepo();
    const plainTimes = Array.from({ length: RUNS }, (_, i) => plainGit(plainRemote.dir, tree, `plain-${i}`));

    const restTimes: number[] = [];
    const natsTimes: number[] = [];
    const h = headers();
    h.set('X-Api-Key', API_KEY);
    for (let i = 0; i < GETS; i++) {
      let s = process.hrtime.bigint();
      await api(svc.base, 'GET', `/api/v1/scaffolds/${lastId}`);
      restTimes.push(ms(s));
      s = process.hrtime.bigint();
      await nc.request('scaffolds.v1.get', JSON.stringify({ id: lastId }), { headers: h, timeout: 5000 });
      natsTimes.push(ms(s));
    }
    const median = (xs: number[]) => Math.round(pct(xs, 50));
    console.log(
      JSON.stringify(
        {
          runs: RUNS,
          run_end_to_end_ms: { p50: median(runTimes), max: Math.round(Math.max(...runTimes)) },
          plain_git_same_work_ms: { p50: median(plainTimes) },
          ratio_service_to_plain_git: +(pct(runTimes, 50) / pct(plainTimes, 50)).toFixed(2),
          get_status_ms: {
            rest: { p50: +pct(restTimes, 50).toFixed(2), p99: +pct(restTimes, 99).toFixed(2) },
            nats: { p50: +pct(natsTimes, 50).toFixed(2), p99: +pct(natsTimes, 99).toFixed(2) },
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
