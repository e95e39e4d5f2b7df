// The demo: a local bare repository, a throwaway sealing certificate, the real service, one run,
// each phase with its duration and the run's events as they happen. --keep (or DEMO_KEEP=1) leaves
// the service (and its database) running and prints its URL, key and commands to try.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { createHash, randomBytes } = require('node:crypto');
const { createServer } = require('node:net');
const { Client } = require('pg');

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
stopKeptDemo();
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

/** A service and nats-server a previous `--keep` left running: stopped, since the demo starts afresh. */
function stopKeptDemo() {
  const pidFile = join(demoDir, 'pids');
  if (!existsSync(pidFile)) return;
  for (const pid of readFileSync(pidFile, 'utf8').split(/\s+/).filter(Boolean))
    try {
      process.kill(Number(pid), 'SIGTERM');
    } catch {
      // already gone
    }
}

/** A port nothing listens on now (the kernel's pick). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

const portOpen = (port) =>
  new Promise((resolve) => {
    const socket = require('node:net').connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket.end() && true));
    socket.once('error', () => resolve(false));
  });

// The demo's own NATS server and database: another checkout's demo, the tests and a service on the machine's
// NATS (4222) and `postgres` database never see its runs, nor it theirs. Named after this checkout's folder.
const checkoutTag = createHash('sha256').update(root).digest('hex').slice(0, 8);
const demoDatabase = `scaffolder_demo_${checkoutTag}`;
const adminDatabaseUrl = process.env.DEMO_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const spawned = [];
/** Whether this demo made its database (then it drops it at the end, unless the service keeps running). */
let databaseMade = false;

async function startNats() {
  const port = await freePort();
  const binary = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => {
    try {
      sh(p, ['--version']);
      return true;
    } catch {
      return false;
    }
  });
  if (!binary) throw new Error('nats-server is not installed (scripts/demo-tools.sh installs it)');
  const log = openSync(join(demoDir, 'nats-server.log'), 'a');
  const nats = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(demoDir, 'nats')], {
    stdio: ['ignore', log, log],
    detached: keep,
  });
  spawned.push(nats);
  for (let i = 0; !(await portOpen(port)); i++) {
    if (i > 100) throw new Error(`nats-server did not start (${join(demoDir, 'nats-server.log')})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return `nats://127.0.0.1:${port}`;
}

/** Runs statements on the machine's PostgreSQL as its administrator (the `postgres` database). */
async function asAdmin(...statements) {
  const admin = new Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  try {
    for (const statement of statements) await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** The demo's database, empty: its read-model must match the demo's new, empty event stream. */
async function freshDatabase() {
  await asAdmin(`DROP DATABASE IF EXISTS ${demoDatabase} WITH (FORCE)`, `CREATE DATABASE ${demoDatabase}`);
  const url = new URL(adminDatabaseUrl);
  url.pathname = `/${demoDatabase}`;
  return url.toString();
}

/** Sends SIGTERM and waits for the process to exit (10 s at most). */
const stopped = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(resolve, 10_000);
    child.once('exit', () => resolve(clearTimeout(timer)));
    child.kill('SIGTERM');
  });

// 3. The service. DEMO_MODEL=cluster-vars runs it over the shipped phased platform (cluster-vars model).
const clusterVarsModel = process.env.DEMO_MODEL === 'cluster-vars';
const apiKey = randomBytes(24).toString('hex');
const port = 18080 + Math.floor(Math.random() * 1000);
const env = {
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  API_KEY: apiKey,
  // The pinned kubectl scripts/demo-tools.sh put in the project's own folder.
  KUBECTL: join(root, '.work/tools/bin/kubectl'),
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
  spawned.push(service);
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
    await phase(`the demo's own nats-server and database ${demoDatabase}, then the service`, async () => {
      env.NATS_URL = await startNats();
      env.DATABASE_URL = await freshDatabase();
      databaseMade = true;
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
      // flux_url: where the new cluster's Flux fetches from (it cannot read this machine's file:// remote).
      repo: { url: `file://${remote}`, branch: 'main', flux_url: 'https://git.demo.example.com/platform.git' },
      target: { sealing_cert_pem: readFileSync(join(demoDir, 'sealing.crt'), 'utf8') },
      ...(clusterVarsModel
        ? {
            cluster_vars: {
              CLUSTER_ISSUER: 'letsencrypt-prod',
              EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::123456789012:role/external-dns-demo',
              // The images come from the registry the pull secret is built for (REGISTRY_SERVER).
              REGISTRY_HOST: env.REGISTRY_SERVER,
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
    // What the generator noticed but did not refuse is in the run's log as warnings: show them.
    const log = await fetch(`${base}/api/v1/scaffolds/${run.id}/logs`, { headers: { 'x-api-key': apiKey } });
    const warnings = (await log.text()).split('\n').filter((line) => /\bwarn/i.test(line));
    if (warnings.length > 0) console.log(`\nwarnings in the run's log:\n${warnings.map((l) => '  ' + l).join('\n')}`);
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
      // The service before its nats-server, so it can drain its connection.
      const pids = spawned
        .map((p) => p.pid)
        .reverse()
        .join(' ');
      writeFileSync(join(demoDir, 'pids'), pids);
      console.log(`\nThe service and its nats-server keep running (log ${join(demoDir, 'service.log')}); stop both with:
  kill ${pids}     (the next npm run demo does it too)
  export API=${base} API_KEY=${apiKey}
  curl -s -H "X-Api-Key: $API_KEY" $API/api/v1/scaffolds | jq .
  curl -s -H "X-Api-Key: $API_KEY" $API/api/v1/scaffolds/${run.id}/logs
  NATS_URL=${env.NATS_URL} DATABASE_URL=${env.DATABASE_URL} npx scaffolderctl status`);
      for (const p of spawned) p.unref();
    }
    process.exitCode = run.status === 'succeeded' ? 0 : 1;
  } catch (e) {
    console.error(`demo failed: ${e.message}`);
    process.exitCode = 1;
  } finally {
    // The service first, and to its end (it drains its NATS connection), then its nats-server.
    const stopping = !keep || process.exitCode;
    if (stopping) for (const p of spawned.reverse()) await stopped(p);
    // The machine's PostgreSQL is shared: a demo that leaves no service behind leaves no database either.
    if (stopping && databaseMade) {
      await asAdmin(`DROP DATABASE IF EXISTS ${demoDatabase} WITH (FORCE)`).then(
        () => console.log(`dropped the demo's database ${demoDatabase} (npm run demo -- --keep keeps it)`),
        (e) => console.error(`could not drop the demo's database ${demoDatabase}: ${e.message}`),
      );
    }
  }
})();
