/**
 * Generation time for a reference environment with 50 services, with and without the kustomize
 * validation of every layer. Run: npm run bench:generator
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { generate, SHIPPED_TEMPLATE } from '../libs/generator/src';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 50);
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
      writeFileSync(p, require('node:fs').readFileSync(p, 'utf8').replace(/\bapi\b/g, name));
    }
  }
  writeFileSync(join(root, 'base/kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: platform\nresources:\n  - namespace.yaml\n${names.map((n) => `  - ${n}\n`).join('')}`);
  return root;
}

function selfSignedCert(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cert-'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096 });
  writeFileSync(join(dir, 'k.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  execFileSync('openssl', ['req', '-x509', '-key', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-days', '365', '-subj', '/CN=sealed-secret']);
  return require('node:fs').readFileSync(join(dir, 'c.pem'), 'utf8');
}

async function timeBothPasses(template: string, cert: string, validate: boolean): Promise<number> {
  const repo = mkdtempSync(join(tmpdir(), 'bench-repo-'));
  const common = { repoDir: repo, templateDir: template, clusterName: 'bench', domain: 'bench.example.com', region: 'us-east-1', acmeEmail: 'ops@bench.example.com', validate };
  const start = process.hrtime.bigint();
  await generate({ ...common, pass: 'infra' });
  await generate({ ...common, pass: 'full', sealingCertPem: cert, registry: { server: 'r.example.com', username: 'u', password: 'p' } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  rmSync(repo, { recursive: true, force: true });
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const template = referenceWithServices(SERVICES);
  const cert = selfSignedCert();
  const results: Record<string, number> = {};
  for (const validate of [false, true]) {
    const runs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) runs.push(await timeBothPasses(template, cert, validate));
    results[validate ? 'with_kustomize_validation_ms' : 'without_validation_ms'] = Math.round(median(runs));
  }
  console.log(JSON.stringify({ services: SERVICES, ingresses: SERVICES + 4, rounds: ROUNDS, both_passes_median: results }, null, 2));
  rmSync(template, { recursive: true, force: true });
}

void main();
