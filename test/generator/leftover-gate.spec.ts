/**
 * The leftover gate on onedr0p/home-ops as published in late 2024 (vendored, WTFPL), with what its full repository
 * holds beside the trimmed snapshot written in as a user's repository would have it: a Cilium HelmRelease naming
 * the cluster and its API endpoint, a ClusterIssuer with the owner's ACME e-mail, a notification Provider posting
 * commit statuses to the reference repository. Before: all of them reached the new cluster, exit 0, no word.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generate, GenerateOptions } from '#libs/generator';
import { GeneratorInputError } from '#libs/generator/errors';
import { describeSummary } from '#libs/generator/summary-text';
import { allFiles, childEnv, tempDir, yamlObjects } from '../support/files';
import { ageIdentity } from '../support/sops-open';
import { homeOpsOptions } from '../support/home-ops-options';

const FIXTURE = join(__dirname, '../fixtures/public/onedr0p-home-ops-sops');
const APPS = 'kubernetes/main/apps/kube-system';

/** Files of home-ops' full repository in the snapshot's layout (cilium, cert-manager's issuer, a GitHub Provider). */
const USER_FILES: Record<string, string> = {
  [`${APPS}/cilium/ks.yaml`]: `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cilium
  namespace: flux-system
spec:
  targetNamespace: kube-system
  path: ./kubernetes/main/apps/kube-system/cilium/app
  prune: true
  sourceRef:
    kind: GitRepository
    name: home-kubernetes
  interval: 30m
`,
  [`${APPS}/cilium/app/kustomization.yaml`]: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ./helmrelease.yaml
  - ./issuer.yaml
  - ./github.yaml
`,
  [`${APPS}/cilium/app/helmrelease.yaml`]: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cilium
spec:
  interval: 30m
  chart:
    spec:
      chart: cilium
      version: 1.16.2
      sourceRef:
        kind: HelmRepository
        name: metrics-server
        namespace: flux-system
  values:
    cluster:
      id: 1
      name: main
    k8sServiceHost: 10.69.1.254
    k8sServicePort: 6443
`,
  [`${APPS}/cilium/app/issuer.yaml`]: `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: letsencrypt-production
spec:
  acme:
    server: https://acme-v02.api.letsencrypt.org/directory
    email: devin@buhl.casa
    privateKeySecretRef:
      name: letsencrypt-production
    solvers:
      - dns01:
          cloudflare:
            apiTokenSecretRef:
              name: cert-manager-secret
              key: api-token
`,
  [`${APPS}/cilium/app/github.yaml`]: `apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata:
  name: github
  namespace: flux-system
spec:
  type: github
  address: https://github.com/onedr0p/home-ops
  secretRef:
    name: github-token
`,
};

describe('the leftover gate (onedr0p/home-ops with SOPS, as published, with the files of its full repository)', () => {
  const age = ageIdentity();
  // cluster-secrets holds the reference's Cloudflare account id: the new cluster's is given, never invented.
  const supplied = {
    'flux-system/cluster-secrets/CLUSTER_SECRET_CLOUDFLARE_ACCOUNT_ID': 'acme-cloudflare-account-0d0d',
  };
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions =>
    homeOpsOptions(age.recipient, repoDir, repoDir, {
      sourceUrl: 'ssh://git@git.acme.example.com/platform/acme',
      suppliedCredentials: supplied,
      ...extra,
    });
  const homeOps = () => {
    const repo = tempDir('leftover-gate');
    cpSync(FIXTURE, repo, { recursive: true });
    for (const [file, text] of Object.entries(USER_FILES)) {
      mkdirSync(dirname(join(repo, file)), { recursive: true });
      writeFileSync(join(repo, file), text);
    }
    const list = join(repo, APPS, 'kustomization.yaml');
    writeFileSync(list, readFileSync(list, 'utf8') + '  - ./cilium/ks.yaml\n');
    return repo;
  };

  const leftoverOf = (
    identifier: string,
    matched: string,
    flag: string,
    file: string,
    object: string,
    field: string,
  ) => ({
    file: `kubernetes/acme/apps/kube-system/cilium/app/${file}`,
    object,
    field,
    value: expect.stringContaining(matched),
    identifier,
    matched,
    flag,
  });
  const KNOWN = [
    leftoverOf(
      'repository-url',
      'github.com/onedr0p/home-ops',
      '--replace github.com/onedr0p/home-ops=NEW',
      'github.yaml',
      'Provider flux-system/github',
      'spec.address',
    ),
    leftoverOf(
      'cluster-name',
      'main',
      '--replace main=acme',
      'helmrelease.yaml',
      'HelmRelease cilium',
      'spec.values.cluster.name',
    ),
    leftoverOf(
      'endpoint',
      '10.69.1.254',
      '--replace 10.69.1.254=NEW',
      'helmrelease.yaml',
      'HelmRelease cilium',
      'spec.values.k8sServiceHost',
    ),
    leftoverOf(
      'acme-email',
      'devin@buhl.casa',
      '--replace devin@buhl.casa=ops@acme.example.com',
      'issuer.yaml',
      'ClusterIssuer letsencrypt-production',
      'spec.acme.email',
    ),
  ];
  const REPLACE = {
    'github.com/onedr0p/home-ops': 'git.acme.example.com/platform/acme',
    main: 'acme',
    '10.69.1.254': '10.0.0.10',
    'devin@buhl.casa': 'ops@acme.example.com',
  };

  it('lists every identifier of the reference left in the new cluster, with file, object, field and flag', async () => {
    const repo = homeOps();
    const { summary } = await generate(options(repo));
    expect(summary.leftovers).toEqual(KNOWN);
    const text = describeSummary(summary);
    expect(text).toContain('  leftovers of the reference: 4\n');
    expect(text).toContain(
      '  leftover kubernetes/acme/apps/kube-system/cilium/app/helmrelease.yaml: HelmRelease cilium spec.values.cluster.name names the reference\'s cluster-name "main" (--replace main=acme)\n',
    );
  });

  it("--replace rewrites them in the new cluster's own files only, and keeps the Git branch", async () => {
    const repo = homeOps();
    const before = allFiles(repo)
      .filter((f) => f.startsWith('kubernetes/main/'))
      .map((f) => [f, readFileSync(join(repo, f), 'utf8')]);
    const { summary } = await generate(options(repo, { replace: REPLACE }));
    expect(summary.leftovers).toEqual([]);
    expect(summary.replaced).toEqual(
      expect.arrayContaining(
        ['github.yaml', 'helmrelease.yaml', 'issuer.yaml'].map(
          (f) => `kubernetes/acme/apps/kube-system/cilium/app/${f}`,
        ),
      ),
    );
    const cilium = yamlObjects(join(repo, 'kubernetes/acme/apps/kube-system/cilium/app/helmrelease.yaml'))[0];
    expect(cilium.spec.values).toMatchObject({ cluster: { id: 1, name: 'acme' }, k8sServiceHost: '10.0.0.10' });
    const sync = yamlObjects(join(repo, 'kubernetes/acme/flux/config/cluster.yaml')).find(
      (o) => o.kind === 'GitRepository',
    );
    expect(sync.spec.ref.branch).toBe('main');
    for (const [f, text] of before) expect([f, readFileSync(join(repo, f), 'utf8')]).toEqual([f, text]);
  });

  it('--strict refuses a pass with leftovers, naming every one at once, and writes nothing', async () => {
    const repo = homeOps();
    const run = generate(options(repo, { strict: true }));
    await expect(run).rejects.toThrow(GeneratorInputError);
    const message = await run.catch((e: Error) => e.message);
    expect(message).toMatch(/^--strict: 4 identifier\(s\) of the reference left in the new cluster: /);
    for (const l of KNOWN) expect(message).toContain(`(${l.flag})`);
    expect(allFiles(repo).some((f) => f.startsWith('kubernetes/acme/'))).toBe(false);
    // With the replacements, the same strict pass goes through.
    expect((await generate(options(repo, { strict: true, replace: REPLACE }))).summary.leftovers).toEqual([]);
  });

  it('on the command line: the console lists them, --strict exits 2 naming them, --replace OLD=NEW moves them', () => {
    const repo = homeOps();
    const credentials = join(tempDir('leftover-credentials'), 'credentials.json');
    writeFileSync(credentials, JSON.stringify(supplied), { mode: 0o600 });
    const cli = (...extra: string[]) => {
      const r = spawnSync(
        process.execPath,
        [
          join(__dirname, '../../bin/generate-gitops-env'),
          ...['--repo', repo, '--template', repo, '--reference-env', 'kubernetes/main', '--cluster-name', 'acme'],
          ...['--domain', 'acme.example.com', '--region', 'eu-west-1', '--acme-email', 'ops@acme.example.com'],
          ...['--infra-only', '--secrets-backend', 'sops', '--age-recipient', age.recipient],
          ...['--source-url', 'ssh://git@git.acme.example.com/platform/acme', '--credentials', credentials, ...extra],
        ],
        { encoding: 'utf8', env: childEnv() },
      );
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const strict = cli('--strict');
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(/^generate-gitops-env: --strict: 4 identifier\(s\) of the reference left/);
    const listed = cli('--dry-run');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('  leftovers of the reference: 4\n');
    const replaced = cli(
      '--strict',
      ...Object.entries(REPLACE).flatMap(([from, to]) => ['--replace', `${from}=${to}`]),
    );
    expect(replaced.stderr).toBe('');
    expect(replaced.code).toBe(0);
  });
});

describe('the leftover gate (fluxcd/flux2-multi-tenancy as published)', () => {
  const options = (repo: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir: repo,
    templateDir: repo,
    referenceEnv: 'staging',
    clusterName: 'acme',
    domain: 'acme.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@acme.example.com',
    pass: 'infra',
    ...extra,
  });
  const fleet = () => {
    const repo = tempDir('multi-tenancy-gate');
    cpSync(join(__dirname, '../fixtures/public/fluxcd-flux2-multi-tenancy'), repo, { recursive: true });
    return repo;
  };

  it("lists the tenant patch's path into the reference's folder of another branch, with --path-map", async () => {
    const { summary } = await generate(options(fleet()));
    expect(summary.leftovers).toEqual([
      {
        file: 'tenants/acme/dev-team-patch.yaml',
        object: 'Kustomization apps/dev-team',
        field: 'spec.path',
        value: './staging',
        identifier: 'environment',
        matched: 'staging',
        flag: '--path-map ./staging=NEW',
      },
    ]);
    await expect(generate(options(fleet(), { strict: true }))).rejects.toThrow(
      /^--strict: 1 identifier\(s\) of the reference left in the new cluster: tenants\/acme\/dev-team-patch\.yaml: Kustomization apps\/dev-team spec\.path names the reference's environment "staging" \(--path-map \.\/staging=NEW\)$/,
    );
  });

  it('goes through --strict once --path-map moves it', async () => {
    const { summary } = await generate(options(fleet(), { strict: true, pathMap: { './staging': './acme' } }));
    expect(summary.leftovers).toEqual([]);
  });
});
