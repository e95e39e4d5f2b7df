/**
 * Issue #29: per-cluster values in shared files that the environment's own folders include (an
 * issuer in apps/base reached through apps/<env>, issuers in a shared base listed by a layer) are
 * the new cluster's in what Flux applies, through patches in the new cluster's folders; the shared
 * files stay as they are; what no patch can reach is listed in the warnings.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Document } from 'yaml';
import { generate, GenerateOptions, SHIPPED_PHASED_TEMPLATE, SHIPPED_TEMPLATE } from '#libs/generator';
import { rewriteStrings } from '#libs/generator/yaml-docs';
import { makeRsaCert } from '../support/certs';
import { kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import { clusterView, outsideNewCluster } from '../support/flux-build';
import { EXAMPLE_ACME_EMAIL, EXAMPLE_HOSTS, writeFluxExampleReference } from '../support/flux-example-repo';

const NEW = { clusterName: 'acme', domain: 'acme.io', region: 'us-east-1', acmeEmail: 'ops@acme.io' };

/** Every string of the objects that contains `needle`, as `<kind> <name> <path>`. */
function placesOf(objects: any[], needle: (value: string) => boolean): string[] {
  const found: string[] = [];
  for (const o of objects)
    rewriteStrings(new Document(o), (value, ctx) => {
      if (needle(value)) found.push(`${o.kind} ${o.metadata?.name} ${ctx.path.join('.')}`);
      return undefined;
    });
  return found.sort();
}

const appendTo = (file: string, text: string) => writeFileSync(file, readFileSync(file, 'utf8') + text);

/** What the second run of the same pass changes. */
async function secondRun(options: GenerateOptions) {
  const { summary } = await generate(options);
  return { written: summary.paths_written, removed: summary.paths_removed };
}

describe("#29 flux-example layout: shared objects reached through the environment's overlay", () => {
  const reference = tempDir('fx29-reference');
  writeFluxExampleReference(reference);
  const base = join(reference, 'apps/base/podinfo');
  // A namespaced issuer in the shared base, with a DNS-01 solver for the reference zone.
  writeFileSync(
    join(base, 'issuer.yaml'),
    `apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: podinfo
  namespace: podinfo
spec:
  acme:
    email: ${EXAMPLE_ACME_EMAIL}
    server: https://acme-v02.api.letsencrypt.org/directory
    privateKeySecretRef:
      name: podinfo-acme
    solvers:
      - dns01:
          route53:
            region: eu-west-1
        selector:
          dnsZones:
            - staging.example.net
`,
  );
  // The e-mail as a whole value (movable) and inside a text (not movable by a patch).
  writeFileSync(
    join(base, 'contact.yaml'),
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: podinfo-contact
  namespace: podinfo
data:
  acme-contact: ${EXAMPLE_ACME_EMAIL}
`,
  );
  appendTo(join(base, 'release.yaml'), `    notes: |\n      Certificate questions: ${EXAMPLE_ACME_EMAIL}\n`);
  appendTo(join(base, 'kustomization.yaml'), '  - issuer.yaml\n  - contact.yaml\n');
  // A shared ClusterIssuer applied through a folder of the overlay with a Flux Kustomization of its own.
  mkdirSync(join(reference, 'apps/base/team-issuer'));
  writeFileSync(
    join(reference, 'apps/base/team-issuer/issuer.yaml'),
    `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: team\nspec:\n  acme:\n    email: ${EXAMPLE_ACME_EMAIL}\n    server: https://acme-v02.api.letsencrypt.org/directory\n    privateKeySecretRef:\n      name: team-acme\n    solvers:\n      - http01:\n          ingress:\n            class: nginx\n`,
  );
  writeFileSync(join(reference, 'apps/base/team-issuer/kustomization.yaml'), 'resources:\n  - issuer.yaml\n');
  mkdirSync(join(reference, 'apps/staging/issuers'));
  writeFileSync(join(reference, 'apps/staging/issuers/kustomization.yaml'), 'resources:\n  - ../../base/team-issuer\n');
  appendTo(
    join(reference, 'clusters/staging/apps.yaml'),
    `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app-issuers
  namespace: flux-system
spec:
  interval: 10m0s
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./apps/staging/issuers
  prune: true
`,
  );

  const repo = tempDir('fx29-fleet');
  cpSync(reference, repo, { recursive: true });
  const options: GenerateOptions = {
    ...NEW,
    repoDir: repo,
    templateDir: reference,
    referenceEnv: 'staging',
    pass: 'infra',
    hostMap: { [EXAMPLE_HOSTS.podinfo]: 'podinfo.acme.io' },
  };
  const before = outsideNewCluster(repo);
  let warnings: string[];
  let built: any[];

  beforeAll(async () => {
    ({ warnings } = (await generate(options)).summary);
    built = Object.values(clusterView(repo, 'acme').built).flat();
  }, 120_000);

  it('builds the new ACME e-mail, zone and region into the shared issuer, through a patch in apps/acme', () => {
    const issuer = built.find((o) => o.kind === 'Issuer' && o.metadata.name === 'podinfo');
    expect(issuer.spec.acme.email).toBe(NEW.acmeEmail);
    expect(issuer.spec.acme.solvers[0]).toEqual({
      dns01: { route53: { region: NEW.region } },
      selector: { dnsZones: [NEW.domain] },
    });
    expect(built.find((o) => o.kind === 'ConfigMap').data['acme-contact']).toBe(NEW.acmeEmail);
    const kustomization = yamlObjects(join(repo, 'apps/acme/kustomization.yaml'))[0];
    expect(kustomization.patches.map((p: any) => p.path)).toEqual(
      expect.arrayContaining([
        'scaffolder-values/issuer-podinfo-podinfo.yaml',
        'scaffolder-values/configmap-podinfo-podinfo-contact.yaml',
      ]),
    );
  });

  it('leaves no reference ACME e-mail, domain, host or external-dns owner in what the cluster applies, except what the warnings list', () => {
    expect(placesOf(built, (v) => v.includes(EXAMPLE_ACME_EMAIL))).toEqual(['HelmRelease podinfo spec.values.notes']);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^apps\/base\/podinfo\/release\.yaml: HelmRelease podinfo\/podinfo spec\.values\.notes still holds the reference's ACME e-mail/,
      ),
    );
    const referenceHosts = Object.values(EXAMPLE_HOSTS);
    expect(placesOf(built, (v) => v.includes('staging.example.net') || referenceHosts.includes(v))).toEqual([]);
    const dns = built.find((o) => o.kind === 'HelmRelease' && o.metadata.name === 'external-dns');
    expect(dns.spec.values).toMatchObject({ domainFilters: [NEW.domain], txtOwnerId: NEW.clusterName });
    expect(built.filter((o) => o.kind === 'ClusterIssuer').map((o) => [o.metadata.name, o.spec.acme.email])).toEqual(
      expect.arrayContaining([
        ['letsencrypt', NEW.acmeEmail],
        ['team', NEW.acmeEmail],
      ]),
    );
    expect(readTree(repo)['apps/acme/issuers/scaffolder-values/clusterissuer-default-team.yaml']).toBeDefined();
  });

  it('keeps every shared file and the reference environment byte for byte, and a second run writes nothing', async () => {
    expect(outsideNewCluster(repo)).toEqual(before);
    expect(readFileSync(join(repo, 'apps/base/podinfo/issuer.yaml'), 'utf8')).toContain(EXAMPLE_ACME_EMAIL);
    expect(await secondRun(options)).toEqual({ written: [], removed: [] });
  }, 120_000);
});

describe('#29 overlay model: issuers in a shared base listed by a layer', () => {
  const REFERENCE_EMAIL = 'platform-dev@example.net';
  const reference = tempDir('ov29-reference');
  cpSync(SHIPPED_TEMPLATE, reference, { recursive: true });
  const layer = join(reference, 'clusters/development/cert-manager-config');
  mkdirSync(join(reference, 'base-issuers'));
  cpSync(join(layer, 'cluster-issuers.yaml'), join(reference, 'base-issuers/cluster-issuers.yaml'));
  rmSync(join(layer, 'cluster-issuers.yaml'));
  writeFileSync(
    join(reference, 'base-issuers/contact.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-contact\n  namespace: cert-manager\ndata:\n  owner: ${REFERENCE_EMAIL}\n  readme: "Renewal mail goes to ${REFERENCE_EMAIL}"\n`,
  );
  writeFileSync(
    join(reference, 'base-issuers/kustomization.yaml'),
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cluster-issuers.yaml\n  - contact.yaml\n',
  );
  writeFileSync(
    join(layer, 'kustomization.yaml'),
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../../base-issuers\n',
  );
  const repo = tempDir('ov29-fleet');
  const options: GenerateOptions = {
    ...NEW,
    repoDir: repo,
    templateDir: reference,
    pass: 'full',
    sealingCertPem: makeRsaCert().certPem,
    registry: { server: 'registry.acme.io', username: 'acme-puller', password: 'RegistryPw-0123456789abcdef' },
  };
  let warnings: string[];
  let built: any[];

  beforeAll(async () => {
    await generate({ ...options, pass: 'infra' });
    ({ warnings } = (await generate(options)).summary);
    const sync = yamlObjects(join(repo, 'clusters/acme/flux-system/gotk-sync.yaml'));
    built = sync
      .filter((o) => o.kind === 'Kustomization' && o.metadata.name !== 'flux-system')
      .flatMap((k) => kustomize(join(repo, k.spec.path)));
  }, 180_000);

  it('builds the new ACME e-mail, zones and region into the shared issuers; the shared files are the reference’s bytes', () => {
    const issuers = built.filter((o) => o.kind === 'ClusterIssuer');
    expect(issuers.map((o) => o.spec.acme.email)).toEqual([NEW.acmeEmail, NEW.acmeEmail]);
    const prod = issuers.find((o) => o.metadata.name === 'letsencrypt-prod');
    expect(prod.spec.acme.solvers[0]).toEqual({
      dns01: { route53: { region: NEW.region } },
      selector: { dnsZones: [NEW.domain] },
    });
    const shared = Object.entries(readTree(repo)).filter(([f]) => f.startsWith('base-issuers/'));
    expect(shared.length).toBe(3);
    for (const [file, text] of shared) expect(text).toBe(readFileSync(join(reference, file), 'utf8'));
  });

  it('lists what no patch can move, and leaves nothing else of the reference e-mail or zone', async () => {
    expect(placesOf(built, (v) => v.includes(REFERENCE_EMAIL))).toEqual(['ConfigMap acme-contact data.readme']);
    expect(built.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'acme-contact').data.owner).toBe(
      NEW.acmeEmail,
    );
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^base-issuers\/contact\.yaml: ConfigMap cert-manager\/acme-contact data\.readme still holds the reference's ACME e-mail/,
      ),
    );
    const issuersAndDns = built.filter((o) => o.kind === 'ClusterIssuer' || o.metadata?.name === 'external-dns');
    expect(placesOf(issuersAndDns, (v) => v.includes('dev.example.net'))).toEqual([]);
    expect(await secondRun(options)).toEqual({ written: [], removed: [] });
  }, 120_000);
});

describe('#29 cluster-vars model: a literal reference value in the shared platform', () => {
  it('is listed in the warnings with file and path (the platform is every cluster’s, so no patch moves it)', async () => {
    const reference = tempDir('cv29-reference');
    cpSync(SHIPPED_PHASED_TEMPLATE, reference, { recursive: true });
    const app = join(reference, 'platform/issuers/app');
    writeFileSync(
      join(app, 'contact.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-contact\n  namespace: cert-manager\ndata:\n  owner: platform-dev@example.net\n',
    );
    appendTo(join(app, 'kustomization.yaml'), '  - contact.yaml\n');
    const repo = tempDir('cv29-fleet');
    const options: GenerateOptions = {
      ...NEW,
      repoDir: repo,
      templateDir: reference,
      referenceEnv: 'dev',
      pass: 'infra',
      // The infra pass rehearses the full pass, whose pull secret needs them.
      registry: { server: 'registry.acme.io', username: 'acme-puller', password: 'RegistryPw-0123456789abcdef' },
      clusterVars: { EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::222222222222:role/external-dns-acme' },
    };
    const { summary } = await generate(options);
    const leftovers = summary.warnings.filter((w) => w.includes('still holds'));
    expect(leftovers).toEqual([
      expect.stringMatching(
        /^platform\/issuers\/app\/contact\.yaml: ConfigMap cert-manager\/acme-contact data\.owner still holds the reference's ACME e-mail/,
      ),
    ]);
    // The issuers themselves take ${ACME_EMAIL} from the new cluster-vars: nothing else is left.
    expect(readFileSync(join(reference, 'platform/issuers/app/contact.yaml'), 'utf8')).toContain('platform-dev@');
    expect(await secondRun(options)).toEqual({ written: [], removed: [] });
  }, 180_000);
});
