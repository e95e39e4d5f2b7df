/**
 * Generation time for reference environments with 10, 50 and 200 services (BENCH_SERVICES), with and without the kustomize
 * validation of every layer, for both environment models (overlays: the shipped template; cluster-vars:
 * the shipped phased platform with 50 more components). Baseline measured in the same run: plain
 * `kubectl kustomize` of every folder the new cluster applies, one after the other, which is what a CI
 * check of the written tree would run. Run: npm run bench:generator
 */
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { generate, SHIPPED_PHASED_TEMPLATE, SHIPPED_TEMPLATE } from '../libs/generator/src';

/** Reference sizes for the overlays model (run time and memory should grow linearly). */
const SIZES = (process.env.BENCH_SERVICES ?? '10,50,200').split(',').map(Number);
const PHASED_COMPONENTS = Number(process.env.BENCH_COMPONENTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

function referenceWithServices(count: number): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-ref-'));
  cpSync(SHIPPED_TEMPLATE, root, { recursive: true });
  const names = Array.from({ length: count }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
  for (const name of names) {
    mkdirSync(join(root, 'base', name), { recursive: true });
    cpSync(join(root, 'base/api'), join(root, 'base', name), { recursive: true });
    for (const f of ['deployment.yaml', 'service.yaml', 'ingress.yaml']) {
      const p = join(root, 'base', name, f);
      writeFileSync(
        p,
        require('node:fs')
          .readFileSync(p, 'utf8')
          .replace(/\bapi\b/g, name),
      );
    }
  }
  writeFileSync(
    join(root, 'base/kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: platform\nresources:\n  - namespace.yaml\n${names.map((n) => `  - ${n}\n`).join('')}`,
  );
  return root;
}

function selfSignedCert(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cert-'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096 });
  writeFileSync(join(dir, 'k.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  execFileSync('openssl', [
    'req',
    '-x509',
    '-key',
    join(dir, 'k.pem'),
    '-out',
    join(dir, 'c.pem'),
    '-days',
    '365',
    '-subj',
    '/CN=sealed-secret',
  ]);
  return require('node:fs').readFileSync(join(dir, 'c.pem'), 'utf8');
}

/** The phased platform with `count` more components in its last phase, each an Ingress under ${CLUSTER_DOMAIN}. */
function phasedWithComponents(count: number): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-phased-'));
  cpSync(SHIPPED_PHASED_TEMPLATE, root, { recursive: true });
  const fs = require('node:fs');
  const names = Array.from({ length: count }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
  for (const name of names) {
    cpSync(join(root, 'platform/api'), join(root, 'platform', name), { recursive: true });
    for (const f of ['ks.yaml', 'app/deployment.yaml', 'app/service.yaml', 'app/ingress.yaml']) {
      const p = join(root, 'platform', name, f);
      fs.writeFileSync(
        p,
        fs
          .readFileSync(p, 'utf8')
          .replace(/\bapi\b/g, name)
          .replace(/\$\{SVC-\d+_REPLICAS\}/, '${API_REPLICAS}'),
      );
    }
  }
  const k = join(root, 'platform/kustomization.yaml');
  fs.writeFileSync(k, fs.readFileSync(k, 'utf8') + names.map((n) => `  - ${n}\n`).join(''));
  return root;
}

interface Timing {
  generate_ms: number;
  /** Plain kubectl kustomize of every folder the written cluster applies. */
  kustomize_baseline_ms: number;
}

async function timeBothPasses(
  template: string,
  cert: string,
  validate: boolean,
  extra: Record<string, unknown> = {},
): Promise<Timing> {
  const repo = mkdtempSync(join(tmpdir(), 'bench-repo-'));
  const common = {
    repoDir: repo,
    templateDir: template,
    clusterName: 'bench',
    domain: 'bench.example.com',
    region: 'us-east-1',
    acmeEmail: 'ops@bench.example.com',
    validate,
    ...extra,
  };
  const start = process.hrtime.bigint();
  await generate({ ...common, pass: 'infra' });
  const { summary } = await generate({
    ...common,
    pass: 'full',
    sealingCertPem: cert,
    registry: { server: 'r.example.com', username: 'u', password: 'p' },
  });
  const generateMs = Number(process.hrtime.bigint() - start) / 1e6;
  const folders = [summary.gitops_path, ...summary.kustomizations.map((k) => k.path.replace(/^\.\//, ''))].filter(
    (f, i, all) => all.indexOf(f) === i && existsSync(join(repo, f, 'kustomization.yaml')),
  );
  const baselineStart = process.hrtime.bigint();
  for (const folder of folders)
    execFileSync('kubectl', ['kustomize', join(repo, folder)], { maxBuffer: 256 * 1024 * 1024 });
  const baselineMs = Number(process.hrtime.bigint() - baselineStart) / 1e6;
  rmSync(repo, { recursive: true, force: true });
  return { generate_ms: generateMs, kustomize_baseline_ms: baselineMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(template: string, cert: string, extra: Record<string, unknown> = {}) {
  const results: Record<string, number> = {};
  for (const validate of [false, true]) {
    const runs: Timing[] = [];
    for (let i = 0; i < ROUNDS; i++) runs.push(await timeBothPasses(template, cert, validate, extra));
    const generated = median(runs.map((r) => r.generate_ms));
    results[validate ? 'with_kustomize_validation_ms' : 'without_validation_ms'] = Math.round(generated);
    if (validate) {
      results.plain_kustomize_of_the_written_tree_ms = Math.round(median(runs.map((r) => r.kustomize_baseline_ms)));
      results.validated_generation_vs_plain_kustomize = Number(
        (generated / results.plain_kustomize_of_the_written_tree_ms).toFixed(2),
      );
    }
  }
  return results;
}

async function main() {
  const cert = selfSignedCert();
  const overlaysBySize = [];
  for (const services of SIZES) {
    const overlays = referenceWithServices(services);
    overlaysBySize.push({
      services,
      ...(await measure(overlays, cert)),
      rss_mib_after: Math.round(process.memoryUsage().rss / 1048576),
    });
    rmSync(overlays, { recursive: true, force: true });
  }
  const phased = phasedWithComponents(PHASED_COMPONENTS);
  const report = {
    rounds: ROUNDS,
    overlays_both_passes_median: overlaysBySize,
    cluster_vars_both_passes_median: {
      components: PHASED_COMPONENTS,
      ...(await measure(phased, cert, {
        referenceEnv: 'dev',
        clusterVars: { EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::1:role/dns' },
      })),
    },
  };
  console.log(JSON.stringify(report, null, 2));
  rmSync(phased, { recursive: true, force: true });
}

// void: a failure is left unhandled, which ends the bench with its stack and exit code 1.
void main();
