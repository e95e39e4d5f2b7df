// The demo: a local bare repository, a throwaway sealing certificate, the real service, one run,
// each phase with its duration and the run's events as they happen. --keep (or DEMO_KEEP=1) leaves
// the service running and prints its URL, key and commands to try.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');

const root = join(__dirname, '..');
const keep = process.argv.includes('--keep') || process.env.DEMO_KEEP === '1';
const started = Date.now();
const elapsed = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
/** Runs one phase of the demo, announcing it and its duration. */
async function phase(name, work) {
  const t = Date.now();
  console.log(`==> ${name}`);
  const result = await work();
  console.log(`    ${name}: ${elapsed(t)}`);
  return result;
}
const demoDir = join(root, '.work', 'demo');
rmSync(demoDir, { recursive: true, force: true });
mkdirSync(demoDir, { recursive: true });
const sh = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });

const remote = join(demoDir, 'platform.git');
function makeRepositoryAndCertificate() {
  // 1. A platform repository with one commit on main.
  sh('git', ['init', '--bare', '--initial-branch=main', remote]);
  const seed = mkdtempSync(join(demoDir, 'seed-'));
  sh('git', ['clone', remote, seed]);
  writeFileSync(join(seed, 'README.md'), '# demo platform fleet\n');
  sh('git', [
    '-C',
    seed,
    '-c',
    'user.name=demo',
    '-c',
    'user.email=demo@localhost',
    'commit',
    '--allow-empty',
    '-m',
    'initial',
    '-q',
  ]);
  sh('git', ['-C', seed, 'add', '.']);
  sh('git', ['-C', seed, '-c', 'user.name=demo', '-c', 'user.email=demo@localhost', 'commit', '-m', 'readme', '-q']);
  sh('git', ['-C', seed, 'push', '-q', 'origin', 'HEAD:main']);

  // 2. A certificate like the sealed-secrets controller's (the demo keeps the private key to prove the seal).
  sh('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:4096',
    '-nodes',
    '-keyout',
    join(demoDir, 'sealing.key'),
    '-out',
    join(demoDir, 'sealing.crt'),
    '-days',
    '365',
    '-subj',
    '/CN=sealed-secret/O=sealed-secret',
  ]);
}

// 3. The service. DEMO_MODEL=cluster-vars runs it over the shipped phased platform (cluster-vars model).
const clusterVarsModel = process.env.DEMO_MODEL === 'cluster-vars';
const apiKey = randomBytes(24).toString('hex');
const port = 18080 + Math.floor(Math.random() * 1000);
const env = {
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  API_KEY: apiKey,
  DATABASE_URL: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  WORK_DIR: join(demoDir, 'work'),
  GIT_ALLOWED_SCHEMES: 'https,ssh,file',
  REGISTRY_SERVER: 'registry.demo.example.com',
  REGISTRY_USERNAME: 'demo-puller',
  REGISTRY_PASSWORD: randomBytes(18).toString('base64url'),
  LOG_LEVEL: 'warn',
  ...(clusterVarsModel ? { TEMPLATE_DIR: join(root, 'templates/phased-platform'), REFERENCE_ENV: 'dev' } : {}),
};
let service;
const startService = () => {
  // A kept service outlives this script: its output goes to a file, not to the terminal it leaves.
  const output = keep ? openSync(join(demoDir, 'service.log'), 'a') : 'inherit';
  service = spawn(process.execPath, [join(root, 'dist/src/main.js')], {
    env,
    stdio: ['ignore', output, output],
    detached: keep,
  });
};
const base = `http://127.0.0.1:${port}`;
const call = async (method, path, body) => {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
};

(async () => {
  try {
    await phase('a platform repository and a throwaway sealing certificate', makeRepositoryAndCertificate);
    await phase('the service (NATS JetStream + PostgreSQL)', async () => {
      startService();
      for (let i = 0; ; i++) {
        const ok = await fetch(`${base}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        if (i > 100) throw new Error('service did not become ready');
        await new Promise((r) => setTimeout(r, 200));
      }
    });
    console.log(`    listening on ${base}`);
    const runStarted = Date.now();
    console.log('==> one scaffold run: POST, then its events as they are appended');
    const created = await call('POST', '/api/v1/scaffolds', {
      cluster_name: 'demo-cluster',
      domain: 'demo.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@demo.example.com',
      repo: { url: `file://${remote}`, branch: 'main' },
      target: { sealing_cert_pem: readFileSync(join(demoDir, 'sealing.crt'), 'utf8') },
      ...(clusterVarsModel
        ? {
            cluster_vars: {
              CLUSTER_ISSUER: 'letsencrypt-prod',
              EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::123456789012:role/external-dns-demo',
            },
          }
        : {}),
    });
    console.log(`POST /api/v1/scaffolds -> ${created.status} run ${created.json.id}`);
    let run;
    const shown = new Set();
    for (;;) {
      // Each event once, stamped with its time since the POST (the API's own event list).
      for (const e of (await call('GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items) {
        if (shown.has(e.seq)) continue;
        shown.add(e.seq);
        console.log(`    +${((Date.parse(e.time) - runStarted) / 1000).toFixed(2).padStart(6)} s  ${e.type}`);
      }
      run = (await call('GET', `/api/v1/scaffolds/${created.json.id}`)).json;
      if (['succeeded', 'failed', 'cancelled'].includes(run.status) && shown.size > 0) break;
      await new Promise((r) => setTimeout(r, 150));
    }
    console.log(`    one scaffold run: ${elapsed(runStarted)} (${run.status}: ${run.message})`);
    console.log(`\ngit log of ${remote}:\n${sh('git', ['--git-dir', remote, 'log', '--format=  %h %s', 'main'])}`);
    console.log(`tree of clusters/demo-cluster at ${run.full_commit ?? 'HEAD'}:`);
    console.log(
      sh('git', ['--git-dir', remote, 'ls-tree', '-r', '--name-only', 'main', 'clusters/demo-cluster'])
        .split('\n')
        .map((l) => '  ' + l)
        .join('\n'),
    );
    if (clusterVarsModel && run.full_commit)
      console.log(
        `\nclusters/demo-cluster/cluster-vars.yaml:\n${sh('git', ['--git-dir', remote, 'show', `${run.full_commit}:clusters/demo-cluster/cluster-vars.yaml`])}`,
      );
    console.log(`\ndemo finished in ${elapsed(started)} (after the steps npm run demo timed above)`);
    if (keep) {
      console.log(`\nThe service keeps running (pid ${service.pid}, log ${join(demoDir, 'service.log')}); stop it with: kill ${service.pid}
  export API=${base} API_KEY=${apiKey}
  curl -s -H "X-Api-Key: $API_KEY" $API/api/v1/scaffolds | jq .
  curl -s -H "X-Api-Key: $API_KEY" $API/api/v1/scaffolds/${run.id}/logs
  NATS_URL=${process.env.NATS_URL || 'nats://127.0.0.1:4222'} DATABASE_URL=${env.DATABASE_URL} npx scaffolderctl status`);
      service.unref();
    }
    process.exitCode = run.status === 'succeeded' ? 0 : 1;
  } catch (e) {
    console.error(`demo failed: ${e.message}`);
    process.exitCode = 1;
  } finally {
    if (!keep || process.exitCode) service?.kill('SIGTERM');
  }
})();
