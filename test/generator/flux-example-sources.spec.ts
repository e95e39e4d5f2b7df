import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { generate, GeneratorInputError, planGeneration, referenceCredentialPlan } from '#libs/generator';
import { sopsEncrypt } from '#libs/sealing/sops';
import { makeRsaCert } from '../support/certs';
import { allFiles, readTree, tempDir, yamlObjects } from '../support/files';
import { writeFluxExampleReference, exampleFirstPass } from '../support/flux-example-repo';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';

const GIT_SOURCE = 'GitRepository podinfo/podinfo-config (apps/staging/secrets/git-source.yaml)';
const HELM_SOURCE = 'HelmRepository flux-system/private-charts (infrastructure/configs/staging/charts.yaml)';
const OCI_SOURCE = 'OCIRepository flux-system/platform-manifests (infrastructure/configs/staging/charts.yaml)';

/** What only GitHub, the chart registry and ghcr.io can issue, as a run's credentials_secret would hold it. */
const SUPPLIED = {
  'podinfo/podinfo-git-auth/username': 'acme-bot',
  'podinfo/podinfo-git-auth/password': 'ghp_IssuedByGitHubForAcme0123456789',
  'flux-system/private-charts-auth/username': 'acme-charts',
  'flux-system/private-charts-auth/password': 'charts/issued+for=acme',
  'flux-system/ghcr-pull/.dockerconfigjson': JSON.stringify({ auths: { 'ghcr.io': { auth: 'YWNtZTpnaHA=' } } }),
  // The token a webhook's sender signs with: given to the sender, so supplied (by its name), never invented.
  'flux-system/webhook-token/token': 'WebhookTokenGivenToGitHub-0c0c',
};

/** Where the run writes each Secret, and its namespace/name. */
const WRITTEN = {
  'apps/acme/secrets/git-auth.yaml': 'podinfo/podinfo-git-auth',
  'apps/acme/secrets/redis-auth.yaml': 'podinfo/redis-auth',
  'infrastructure/configs/acme/charts-auth.yaml': 'flux-system/private-charts-auth',
  'infrastructure/configs/acme/manifests-pull.yaml': 'flux-system/ghcr-pull',
  'infrastructure/configs/acme/webhook-token.yaml': 'flux-system/webhook-token',
};

/** The reference's own .sops.yaml: a rule per reference cluster, for that cluster's age key. */
const referenceRules = (staging: string, production: string) => `# Each cluster's Secrets for its own age key.
creation_rules:
  # staging
  - path_regex: ^(apps|infrastructure/configs)/staging/.*\\.yaml$
    encrypted_regex: ^(data|stringData)$
    age: ${staging}
  - path_regex: ^(apps|infrastructure/configs)/production/.*\\.yaml$
    encrypted_regex: ^(data|stringData)$
    age: ${production}
`;

/**
 * A reference in the layout of Flux's example repository whose sources read credentials, every
 * Secret SOPS-encrypted for its reference cluster (whose key the generator never gets), and a fleet
 * holding a copy of it.
 */
async function sourcesFleet() {
  const reference = tempDir('fx-src-reference');
  writeFluxExampleReference(reference, { sources: true });
  const owners = { staging: ageIdentity().recipient, production: ageIdentity().recipient };
  for (const file of allFiles(reference).filter((f) =>
    /^(apps|infrastructure\/configs)\/(staging|production)\//.test(f),
  )) {
    const docs = yamlObjects(join(reference, file));
    const doc = docs[0];
    if (docs.length !== 1 || doc?.kind !== 'Secret') continue;
    const env = file.includes('/staging/') ? 'staging' : 'production';
    writeFileSync(join(reference, file), stringify(await sopsEncrypt(doc, { recipients: [owners[env]] })));
  }
  writeFileSync(join(reference, '.sops.yaml'), referenceRules(owners.staging, owners.production));
  const repo = tempDir('fx-src-fleet');
  cpSync(reference, repo, { recursive: true });
  const options = exampleFirstPass(repo, reference);
  return { reference, repo, options, owners };
}

/** sops's choice for a file: the first creation rule whose path_regex matches its repository-relative path. */
function ruleFor(repo: string, path: string): any {
  return parse(readFileSync(join(repo, '.sops.yaml'), 'utf8')).creation_rules.find((r: any) =>
    new RegExp(r.path_regex).test(path),
  );
}

/** The files of the repository encrypted for `recipient`, by repository path. */
function encryptedFor(repo: string, recipient: string): Record<string, any> {
  return Object.fromEntries(
    allFiles(repo)
      .filter((f) => /\.ya?ml$/.test(f) && f !== '.sops.yaml')
      .map((f) => [f, yamlObjects(join(repo, f))[0]])
      .filter(([, doc]) => (doc?.sops?.age ?? []).some((a: any) => a.recipient === recipient)),
  );
}

describe("generator, Flux example layout whose sources read another system's credentials", () => {
  it('plans those Secrets as supplied, naming the sources; the full pass without them refuses, naming Secret and source, and writes nothing', async () => {
    const { reference, repo, options } = await sourcesFleet();
    // Without them, even the infra pass is refused: its rehearsal of the full pass lists them, and nothing is written.
    const pristine = readTree(repo);
    const early = await generate(options).catch((e) => e);
    expect(early).toBeInstanceOf(GeneratorInputError);
    expect(early.message).toMatch(
      /^refused before the infra pass writes anything, as the full pass that follows it would be: 6 value\(s\) the generator must not invent are missing/,
    );
    expect(early.message).toContain(
      `flux-system/ghcr-pull/.dockerconfigjson (Secret flux-system/ghcr-pull is read by ${OCI_SOURCE})`,
    );
    expect(readTree(repo)).toEqual(pristine);
    const infra = await generate({ ...options, suppliedCredentials: SUPPLIED });
    const plan = infra.summary.credential_plan;
    const classOf = (id: string) => {
      const e = plan.find((p) => `${p.namespace}/${p.name}/${p.key}` === id);
      return e && [e.class, e.recognised_by, e.used_by];
    };
    expect(classOf('podinfo/podinfo-git-auth/password')).toEqual(['supplied', 'source', [GIT_SOURCE]]);
    expect(classOf('podinfo/podinfo-git-auth/username')).toEqual(['supplied', 'source', [GIT_SOURCE]]);
    expect(classOf('flux-system/private-charts-auth/password')).toEqual(['supplied', 'source', [HELM_SOURCE]]);
    expect(classOf('flux-system/ghcr-pull/.dockerconfigjson')).toEqual(['supplied', 'source', [OCI_SOURCE]]);
    expect(classOf('podinfo/redis-auth/password')).toEqual(['generated', undefined, undefined]);
    expect(classOf('flux-system/webhook-token/token')).toEqual(['supplied', 'name', undefined]);
    // The service checks a request with the same plan, read from the reference alone.
    expect(referenceCredentialPlan(reference, 'staging')).toEqual(plan);

    const before = readTree(repo);
    for (const backend of [
      { secretsBackend: 'sops' as const, ageRecipients: [ageIdentity().recipient] },
      { sealingCertPem: makeRsaCert().certPem },
    ]) {
      const failure = await generate({ ...options, ...backend, pass: 'full' }).catch((e) => e);
      expect(failure).toBeInstanceOf(GeneratorInputError);
      expect(failure.message).toContain(
        `podinfo/podinfo-git-auth/password (Secret podinfo/podinfo-git-auth is read by ${GIT_SOURCE})`,
      );
      expect(failure.message).toContain(
        `flux-system/private-charts-auth/username (Secret flux-system/private-charts-auth is read by ${HELM_SOURCE})`,
      );
      expect(failure.message).toContain(
        `flux-system/ghcr-pull/.dockerconfigjson (Secret flux-system/ghcr-pull is read by ${OCI_SOURCE})`,
      );
      expect(readTree(repo)).toEqual(before);
    }
  });

  it('SOPS backend: supplied values exactly, every encrypted file under the new rule and opened with its key, other rules kept, a second run writes nothing', async () => {
    const { repo, options, owners } = await sourcesFleet();
    const cluster = ageIdentity();
    const full = {
      ...options,
      pass: 'full' as const,
      secretsBackend: 'sops' as const,
      ageRecipients: [cluster.recipient],
    };
    await generate({
      ...options,
      secretsBackend: 'sops',
      ageRecipients: [cluster.recipient],
      suppliedCredentials: SUPPLIED,
    });
    const { summary } = await generate({ ...full, suppliedCredentials: SUPPLIED });

    const encrypted = encryptedFor(repo, cluster.recipient);
    expect(Object.keys(encrypted).sort()).toEqual(Object.keys(WRITTEN));
    expect(summary.paths_written).toEqual(expect.arrayContaining(Object.keys(WRITTEN)));
    for (const [file, doc] of Object.entries(encrypted)) {
      expect(ruleFor(repo, file).age).toBe(cluster.recipient);
      const { plain, macOk } = sopsOpen(doc, cluster.keyFile);
      expect(macOk).toBe(true);
      expect(`${plain.metadata.namespace}/${plain.metadata.name}`).toBe(WRITTEN[file as keyof typeof WRITTEN]);
      for (const [key, value] of Object.entries(plain.stringData)) {
        const id = `${plain.metadata.namespace}/${plain.metadata.name}/${key}`;
        if (id in SUPPLIED) expect(value).toBe(SUPPLIED[id as keyof typeof SUPPLIED]);
        else expect(value).toMatch(/^[A-Za-z0-9]{40}$/);
      }
    }
    // The reference clusters' rules stay, with their comments, and still decide for their files.
    const rules = readFileSync(join(repo, '.sops.yaml'), 'utf8');
    expect(parse(rules).creation_rules.map((r: any) => r.age)).toEqual([
      cluster.recipient,
      owners.staging,
      owners.production,
    ]);
    expect(rules).toContain('# Each cluster');
    expect(ruleFor(repo, 'apps/staging/secrets/git-auth.yaml').age).toBe(owners.staging);
    expect(ruleFor(repo, 'infrastructure/configs/production/charts-auth.yaml').age).toBe(owners.production);

    const again = await planGeneration({ ...full, suppliedCredentials: SUPPLIED });
    expect([...again.writes.keys()]).toEqual([]);
    expect(again.removals).toEqual([]);
  });

  it('Sealed Secrets backend: the supplied values sealed exactly, opened with the private key', async () => {
    const { repo, options } = await sourcesFleet();
    const cert = makeRsaCert();
    await generate({ ...options, suppliedCredentials: SUPPLIED });
    await generate({ ...options, pass: 'full', sealingCertPem: cert.certPem, suppliedCredentials: SUPPLIED });
    const open = (file: string) => unsealManifest(cert.privateKeyPem, yamlObjects(join(repo, file))[0]);
    expect(open('apps/acme/secrets/git-auth.yaml')).toEqual({
      username: SUPPLIED['podinfo/podinfo-git-auth/username'],
      password: SUPPLIED['podinfo/podinfo-git-auth/password'],
    });
    expect(open('infrastructure/configs/acme/charts-auth.yaml')).toEqual({
      username: SUPPLIED['flux-system/private-charts-auth/username'],
      password: SUPPLIED['flux-system/private-charts-auth/password'],
    });
    expect(open('infrastructure/configs/acme/manifests-pull.yaml')).toEqual({
      '.dockerconfigjson': SUPPLIED['flux-system/ghcr-pull/.dockerconfigjson'],
    });
    expect(open('infrastructure/configs/acme/webhook-token.yaml').token).toBe(
      SUPPLIED['flux-system/webhook-token/token'],
    );
  });
});
