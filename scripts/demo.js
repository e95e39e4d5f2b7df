// The demo: a local bare repository, a throwaway sealing certificate, the real service, one run.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');

const root = join(__dirname, '..');
const demoDir = join(root, '.work', 'demo');
rmSync(demoDir, { recursive: true, force: true });
mkdirSync(demoDir, { recursive: true });
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });

// 1. A platform repository with one commit on main.
const remote = join(demoDir, 'platform.git');
sh('git', ['init', '--bare', '--initial-branch=main', remote]);
const seed = mkdtempSync(join(demoDir, 'seed-'));
sh('git', ['clone', remote, seed]);
writeFileSync(join(seed, 'README.md'), '# demo platform fleet\n');
sh('git', ['-C', seed, '-c', 'user.name=demo', '-c', 'user.email=demo@localhost', 'commit', '--allow-empty', '-m', 'initial', '-q']);
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
const service = spawn(process.execPath, [join(root, 'dist/src/main.js')], { env, stdio: ['ignore', 'inherit', 'inherit'] });
const base = `http://127.0.0.1:${port}`;
const call = async (method, path, body) => {
  const res = await fetch(base + path, { method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  return { status: res.status, json: await res.json().catch(() => null) };
};

(async () => {
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 100) throw new Error('service did not become healthy');
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`service up on ${base}`);
    const created = await call('POST', '/api/v1/scaffolds', {
      cluster_name: 'demo-cluster',
      domain: 'demo.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@demo.example.com',
      repo: { url: `file://${remote}`, branch: 'main' },
      target: { sealing_cert_pem: readFileSync(join(demoDir, 'sealing.crt'), 'utf8') },
      ...(clusterVarsModel ? { cluster_vars: { CLUSTER_ISSUER: 'letsencrypt-prod', EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::123456789012:role/external-dns-demo' } } : {}),
    });
    console.log(`POST /api/v1/scaffolds -> ${created.status} run ${created.json.id}`);
    let last = '';
    let run;
    for (;;) {
      run = (await call('GET', `/api/v1/scaffolds/${created.json.id}`)).json;
      const line = `  ${run.status.padEnd(9)} ${String(run.step).padEnd(20)} ${run.message}`;
      if (line !== last) console.log(line);
      last = line;
      if (['succeeded', 'failed', 'cancelled'].includes(run.status)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const events = (await call('GET', `/api/v1/scaffolds/${run.id}/events`)).json.items;
    console.log(`\nevents: ${events.map((e) => e.type).join(' -> ')}`);
    console.log(`\ngit log of ${remote}:\n${sh('git', ['--git-dir', remote, 'log', '--format=  %h %s', 'main'])}`);
    console.log(`tree of clusters/demo-cluster at ${run.full_commit ?? 'HEAD'}:`);
    console.log(
      sh('git', ['--git-dir', remote, 'ls-tree', '-r', '--name-only', 'main', 'clusters/demo-cluster'])
        .split('\n')
        .map((l) => '  ' + l)
        .join('\n'),
    );
    if (clusterVarsModel && run.full_commit)
      console.log(`\nclusters/demo-cluster/cluster-vars.yaml:\n${sh('git', ['--git-dir', remote, 'show', `${run.full_commit}:clusters/demo-cluster/cluster-vars.yaml`])}`);
    process.exitCode = run.status === 'succeeded' ? 0 : 1;
  } catch (e) {
    console.error(`demo failed: ${e.message}`);
    process.exitCode = 1;
  } finally {
    service.kill('SIGTERM');
  }
})();
