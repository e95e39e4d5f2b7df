/**
 * Cost curves of the generator (both passes, with and without the kustomize validation of every
 * layer), each case beside plain `kubectl kustomize` of every folder the written cluster applies,
 * one after the other, measured in the same run (what a CI check of the written tree would run):
 * - overlays references with 10, 50 and 200 services (BENCH_SERVICES);
 * - one more cluster in a repository already holding 0, 19 and 199 (BENCH_CLUSTERS=1,20,200 clusters in all);
 * - a home-ops style reference (rendered onedr0p/cluster-template, multi-cluster as in onedr0p/home-ops)
 *   with BENCH_APPS apps in kubernetes/main/apps/<namespace>/<app>/ks.yaml + app/;
 * - the shipped phased platform with BENCH_COMPONENTS more components (cluster-vars model).
 * Each case runs in its own process, so its peak RSS (VmHWM) is its own; the plain tools' figure is
 * the largest kubectl's. Rounds name a new cluster each (bench-0, bench-1, ...), so no round reuses
 * another's kustomize builds; the reference's parses are reused, as a service's runs reuse them.
 * Run: npm run bench:generator (BENCH_CASES=services,clusters,home-ops,cluster-vars picks cases).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { generate, GenerateOptions, SHIPPED_PHASED_TEMPLATE, SHIPPED_TEMPLATE } from '#libs/generator';

const list = (v: string | undefined, d: string) => (v ?? d).split(',').filter(Boolean);
/** Reference sizes for the overlays model (run time and memory should grow linearly). */
const SIZES = list(process.env.BENCH_SERVICES, '10,50,200').map(Number);
/** Clusters in the one repository the new cluster is written into (itself included). */
const CLUSTERS = list(process.env.BENCH_CLUSTERS, '1,20,200').map(Number);
const APPS = Number(process.env.BENCH_APPS ?? 300);
const PHASED_COMPONENTS = Number(process.env.BENCH_COMPONENTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CASES = list(process.env.BENCH_CASES, 'services,clusters,home-ops,cluster-vars');

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

/**
 * A home-ops style reference: the rendered onedr0p/cluster-template fixture with `apps` more apps
 * spread over 20 namespaces, each kubernetes/main/apps/<namespace>/<app>/ks.yaml (a Flux Kustomization
 * substituted from cluster-settings) and app/ (a HelmRelease with an Ingress host under ${CLUSTER_DOMAIN}).
 */
function homeOpsReference(apps: number): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-home-ops-'));
  cpSync(join(__dirname, '../../test/fixtures/public/onedr0p-cluster-template'), root, { recursive: true });
  const apps_ = join(root, 'kubernetes/main/apps');
  const byNamespace = new Map<string, string[]>();
  for (let i = 0; i < apps; i++) {
    const ns = `ns-${String(i % 20).padStart(2, '0')}`;
    const app = `app-${String(i).padStart(3, '0')}`;
    byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), app]);
    mkdirSync(join(apps_, ns, app, 'app'), { recursive: true });
    writeFileSync(join(apps_, ns, app, 'ks.yaml'), homeOpsKs(ns, app));
    writeFileSync(join(apps_, ns, app, 'app/helmrelease.yaml'), homeOpsRelease(app));
    writeFileSync(
      join(apps_, ns, app, 'app/kustomization.yaml'),
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ./helmrelease.yaml\n',
    );
  }
  for (const [ns, names] of byNamespace) {
    writeFileSync(
      join(apps_, ns, 'namespace.yaml'),
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled\n`,
    );
    writeFileSync(
      join(apps_, ns, 'kustomization.yaml'),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ./namespace.yaml\n${names.map((n) => `  - ./${n}/ks.yaml\n`).join('')}`,
    );
  }
  return root;
}

const homeOpsKs = (ns: string, app: string) => `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app ${app}
  namespace: flux-system
spec:
  targetNamespace: ${ns}
  commonMetadata:
    labels:
      app.kubernetes.io/name: *app
  path: ./kubernetes/main/apps/${ns}/${app}/app
  prune: true
  sourceRef:
    kind: GitRepository
    name: home-kubernetes
  wait: false
  interval: 30m
`;

const homeOpsRelease = (app: string) => `---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ${app}
spec:
  interval: 30m
  chart:
    spec:
      chart: app-template
      version: 3.1.0
      sourceRef:
        kind: HelmRepository
        name: bjw-s
        namespace: flux-system
  values:
    controllers:
      ${app}:
        containers:
          app:
            image:
              repository: ghcr.io/example/${app}
              tag: 1.0.0
            env:
              TZ: \${TIMEZONE}
    service:
      app:
        controller: ${app}
        ports:
          http:
            port: 8080
    ingress:
      app:
        className: internal
        hosts:
          - host: ${app}.\${CLUSTER_DOMAIN}
            paths:
              - path: /
                service:
                  identifier: app
                  port: http
`;

/** An age public key from the real age-keygen (the home-ops reference keeps its Secrets SOPS-encrypted). */
function ageRecipient(): string {
  const key = join(mkdtempSync(join(tmpdir(), 'bench-age-')), 'key.txt');
  execFileSync('age-keygen', ['-o', key], { stdio: 'ignore' });
  return execFileSync('age-keygen', ['-y', key], { encoding: 'utf8' }).trim();
}

interface Timing {
  generate_ms: number;
  /** Plain kubectl kustomize of every folder the written cluster applies (validated rounds only). */
  kustomize_baseline_ms?: number;
  /** The largest kubectl's peak RSS in the baseline, KiB. */
  kustomize_rss_kib?: number;
}

/** What a case generates: the options of both passes (the full pass's on top), and the repository it starts from. */
interface Case {
  options: (repo: string, round: number) => Omit<GenerateOptions, 'validate' | 'pass'>;
  full?: Partial<GenerateOptions>;
  /** Fills a fresh repository before the round (not timed). */
  prepare?: (repo: string) => void;
}

async function timeBothPasses(c: Case, validate: boolean, round: number): Promise<Timing> {
  const repo = mkdtempSync(join(tmpdir(), 'bench-repo-'));
  c.prepare?.(repo);
  const common = { ...c.options(repo, round), validate };
  const start = process.hrtime.bigint();
  await generate({ ...common, pass: 'infra' });
  const { summary } = await generate({ ...common, pass: 'full', ...c.full });
  const generateMs = Number(process.hrtime.bigint() - start) / 1e6;
  const timing: Timing = { generate_ms: generateMs };
  if (validate) Object.assign(timing, plainKustomize(repo, summary));
  rmSync(repo, { recursive: true, force: true });
  return timing;
}

/** The baseline: `kubectl kustomize` of each folder the written cluster applies that has a kustomization, one after the other. */
function plainKustomize(repo: string, summary: { gitops_path: string; kustomizations: Array<{ path: string }> }) {
  const folders = [summary.gitops_path, ...summary.kustomizations.map((k) => k.path.replace(/^\.\//, ''))].filter(
    (f, i, all) => all.indexOf(f) === i && existsSync(join(repo, f, 'kustomization.yaml')),
  );
  let rss = 0;
  const start = process.hrtime.bigint();
  for (const folder of folders) {
    // GNU time's %M: the build's peak RSS, printed last on stderr.
    const r = spawnSync('/usr/bin/time', ['-f', '%M', 'kubectl', 'kustomize', join(repo, folder)], {
      maxBuffer: 256 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`kubectl kustomize ${folder}: ${r.stderr}`);
    rss = Math.max(rss, Number(r.stderr.toString().trim().split('\n').pop()));
  }
  return { kustomize_baseline_ms: Number(process.hrtime.bigint() - start) / 1e6, kustomize_rss_kib: rss };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(c: Case) {
  const results: Record<string, number> = {};
  for (const validate of [false, true]) {
    const runs: Timing[] = [];
    for (let i = 0; i < ROUNDS; i++) runs.push(await timeBothPasses(c, validate, i));
    const generated = median(runs.map((r) => r.generate_ms));
    results[validate ? 'with_kustomize_validation_ms' : 'without_validation_ms'] = Math.round(generated);
    if (validate) {
      results.plain_kustomize_of_the_written_tree_ms = Math.round(median(runs.map((r) => r.kustomize_baseline_ms!)));
      results.validated_generation_vs_plain_kustomize = Number(
        (generated / results.plain_kustomize_of_the_written_tree_ms).toFixed(2),
      );
      results.plain_kustomize_peak_rss_mib = Math.round(Math.max(...runs.map((r) => r.kustomize_rss_kib!)) / 1024);
    }
  }
  results.generator_peak_rss_mib = Math.round(process.resourceUsage().maxRSS / 1024);
  return results;
}

const overlayOptions =
  (template: string) =>
  (repo: string, round: number): Omit<GenerateOptions, 'validate' | 'pass'> => ({
    repoDir: repo,
    templateDir: template,
    clusterName: `bench-${round}`,
    domain: `bench-${round}.example.com`,
    region: 'us-east-1',
    acmeEmail: `ops@bench-${round}.example.com`,
  });

const fullOverlay = (cert: string): Partial<GenerateOptions> => ({
  sealingCertPem: cert,
  registry: { server: 'r.example.com', username: 'u', password: 'p' },
});

/** A repository holding `count` clusters of the reference (written once, copied), for one more to join. */
async function fleetRepository(template: string, cert: string, count: number): Promise<string> {
  const fleet = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  if (count === 0) return fleet;
  const seed = { ...overlayOptions(template)(fleet, 0), clusterName: 'fleet-0', validate: false };
  await generate({ ...seed, pass: 'infra' });
  await generate({ ...seed, pass: 'full', ...fullOverlay(cert) });
  for (let i = 1; i < count; i++)
    cpSync(join(fleet, 'clusters/fleet-0'), join(fleet, `clusters/fleet-${i}`), { recursive: true });
  return fleet;
}

/** One case, in this process (the parent starts one process per case, so that each peak RSS is the case's own). */
async function runCase(name: string, size: number): Promise<Record<string, unknown>> {
  const cert = readFileSync(process.env.BENCH_CERT!, 'utf8');
  if (name === 'services') {
    const template = referenceWithServices(size);
    return { services: size, ...(await measure({ options: overlayOptions(template), full: fullOverlay(cert) })) };
  }
  if (name === 'clusters') {
    const template = referenceWithServices(10);
    const fleet = await fleetRepository(template, cert, size - 1);
    return {
      clusters_in_the_repository: size,
      ...(await measure({
        options: overlayOptions(template),
        full: fullOverlay(cert),
        prepare: (repo) => cpSync(fleet, repo, { recursive: true }),
      })),
    };
  }
  if (name === 'home-ops') {
    const reference = homeOpsReference(size);
    const recipient = ageRecipient();
    return {
      apps: size,
      ...(await measure({
        prepare: (repo) => cpSync(reference, repo, { recursive: true }),
        options: (repo, round) => ({
          repoDir: repo,
          templateDir: repo,
          referenceEnv: 'kubernetes/main',
          clusterName: `bench-${round}`,
          domain: `bench-${round}.example.com`,
          region: 'eu-west-1',
          acmeEmail: `ops@bench-${round}.example.com`,
          secretsBackend: 'sops',
          ageRecipients: [recipient],
          suppliedCredentials: {
            'cert-manager/cert-manager-secret/api-token': 'BenchCloudflareToken-cert-manager-7e7e',
            'network/external-dns-secret/api-token': 'BenchCloudflareToken-external-dns-8f8f',
          },
        }),
      })),
    };
  }
  const phased = phasedWithComponents(size);
  return {
    components: size,
    ...(await measure({
      options: (repo, round) => ({
        ...overlayOptions(phased)(repo, round),
        referenceEnv: 'dev',
        clusterVars: { EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::1:role/dns' },
      }),
      full: fullOverlay(cert),
    })),
  };
}

function inChild(name: string, size: number, certFile: string): Record<string, unknown> {
  const out = execFileSync(process.execPath, [__filename, name, String(size)], {
    env: { ...process.env, BENCH_CERT: certFile },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(out);
}

async function main() {
  const [name, size] = process.argv.slice(2);
  if (name) {
    console.log(JSON.stringify(await runCase(name, Number(size))));
    return;
  }
  const certFile = join(mkdtempSync(join(tmpdir(), 'bench-cert-')), 'cert.pem');
  writeFileSync(certFile, selfSignedCert());
  const cases: Record<string, number[]> = {
    services: SIZES,
    clusters: CLUSTERS,
    'home-ops': [APPS],
    'cluster-vars': [PHASED_COMPONENTS],
  };
  const report: Record<string, unknown> = { rounds: ROUNDS };
  for (const name of CASES) report[name] = cases[name].map((size) => inChild(name, size, certFile));
  console.log(JSON.stringify(report, null, 2));
}

// void: a failure is left unhandled, which ends the bench with its stack and exit code 1.
void main();
