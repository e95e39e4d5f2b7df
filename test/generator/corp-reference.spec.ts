import { join } from 'node:path';
import { generate, GenerateOptions, GeneratorInputError } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { allFiles, kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import { CORP_PLANTED, writeCorpReference } from '../support/reference-repos';
import { unsealManifest } from '../support/unseal';

describe('generator on a differently shaped reference repository', () => {
  const cert = makeRsaCert();
  const template = tempDir('corp-template');
  writeCorpReference(template);
  const ISSUED_TOKEN = 'tok_issued_for_tenant42_0001';
  const base = (repo: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir: repo,
    templateDir: template,
    referenceEnv: 'staging',
    infraLayer: 'core',
    clusterName: 'tenant-42',
    domain: 'tenant42.example.com',
    region: 'eu-central-1',
    acmeEmail: 'certs@tenant42.example.com',
    pass: 'infra',
    // Both passes: the infra pass rehearses the full pass, which needs them.
    registry: { server: 'reg.tenant42.example.com', username: 'bot', password: 'BotPassword-abcdefghijklmnop' },
    suppliedCredentials: { 'state/mongo-root/api-token': ISSUED_TOKEN },
    sourceUrl: 'ssh://git@git.tenant42.example.com/fleet.git',
    sourceBranch: 'main',
    ...extra,
  });

  it('discovers layers, sync file, external-dns flags, Ingresses and Secrets from the reference itself', async () => {
    const repo = tempDir('corp');
    const infra = await generate(base(repo));
    expect(infra.summary.reference_domain).toBe('stg.corp.example.org');
    expect(infra.summary.reference_region).toBe('ap-southeast-2');
    const dns = yamlObjects(join(repo, 'clusters/tenant-42/core/external-dns.yaml'))[0];
    expect(dns.spec.template.spec.containers[0].args).toEqual([
      '--source=ingress',
      '--provider=aws',
      '--domain-filter=tenant42.example.com',
      '--txt-owner-id=tenant-42',
    ]);
    expect(dns.spec.template.spec.containers[0].env).toEqual([{ name: 'AWS_REGION', value: 'eu-central-1' }]);
    const infraSync = yamlObjects(join(repo, 'clusters/tenant-42/flux-system/sync.yaml'));
    expect(infraSync.filter((o) => o.kind === 'Kustomization').map((k) => k.metadata.name)).toEqual(['core']);
    expect(infraSync[0].spec).toMatchObject({
      url: 'ssh://git@git.tenant42.example.com/fleet.git',
      ref: { branch: 'main' },
    });

    const { summary, credentials } = await generate(base(repo, { pass: 'full', sealingCertPem: cert.certPem }));
    const sync = yamlObjects(join(repo, 'clusters/tenant-42/flux-system/sync.yaml')).filter(
      (o) => o.kind === 'Kustomization',
    );
    const deps = Object.fromEntries(sync.map((k) => [k.metadata.name, k.spec.dependsOn]));
    // services keeps its own dependency on data and gains core; issuers had no Kustomization and gets one.
    expect(deps).toEqual({
      core: undefined,
      services: [{ name: 'core' }, { name: 'data' }],
      data: [{ name: 'core' }],
      issuers: [{ name: 'core' }],
    });
    for (const k of sync) kustomize(join(repo, k.spec.path));

    const ingresses = kustomize(join(repo, 'clusters/tenant-42/services')).filter((o) => o.kind === 'Ingress');
    expect(
      ingresses
        .map((i) => `${i.metadata.namespace}/${i.metadata.name}=${i.spec.rules.map((r: any) => r.host).join(',')}`)
        .sort(),
    ).toEqual([
      'shop/cart=cart.tenant42.example.com',
      'shop/catalog=catalog.tenant42.example.com',
      'shop/checkout=checkout.tenant42.example.com,pay.tenant42.example.com,tenant42.example.com',
      'shop/gateway=shop.tenant42.example.com,admin.tenant42.example.com',
    ]);
    expect(summary.ingress_hosts).toHaveLength(4);
    expect(readTree(join(repo, 'platform'))).toEqual(readTree(join(template, 'platform')));

    const issuer = yamlObjects(join(repo, 'clusters/tenant-42/issuers/issuer.yaml'))[0];
    expect(issuer.spec.acme.email).toBe('certs@tenant42.example.com');
    expect(issuer.spec.acme.solvers[0]).toEqual({
      dns01: { route53: { region: 'eu-central-1' } },
      selector: { dnsNames: ['*.tenant42.example.com'] },
    });

    // The multi-document file keeps its ConfigMap and seals both Secrets with the layer's namespace.
    const data = yamlObjects(join(repo, 'clusters/tenant-42/data/secrets.yaml'));
    expect(data.map((d) => d.kind)).toEqual(['ConfigMap', 'SealedSecret', 'SealedSecret']);
    const redis = unsealManifest(cert.privateKeyPem, data[1]);
    expect(data[1].metadata.namespace).toBe('state');
    expect(data[1].spec.template.metadata.labels).toEqual({ tier: 'cache' });
    expect(redis['redis-password']).toMatch(/^[A-Za-z0-9]{40}$/);
    const mongo = unsealManifest(cert.privateKeyPem, data[2]);
    expect(mongo['connection-string']).toBe(
      `mongodb://${mongo['root-username']}:${mongo['root-password']}@mongo.state.svc:27017/admin`,
    );
    // An API token is recognised by its name as a credential only its issuer creates: taken as given, never invented.
    expect(mongo['api-token']).toBe(ISSUED_TOKEN);
    expect(summary.credential_plan.find((e) => e.name === 'mongo-root' && e.key === 'api-token')).toMatchObject({
      class: 'supplied',
      recognised_by: 'name',
    });
    expect(
      summary.warnings.some((w) =>
        w.includes('state/mongo-root/api-token is taken as a supplied credential by its name alone'),
      ),
    ).toBe(true);
    for (const s of [data[1], data[2]]) {
      for (const [key, value] of Object.entries(unsealManifest(cert.privateKeyPem, s)))
        expect(credentials).toContainEqual({ namespace: 'state', name: s.metadata.name, key, value });
    }
    const pull = yamlObjects(join(repo, 'clusters/tenant-42/services/pull-secret.yaml'))[0];
    expect(pull.metadata.namespace).toBe('shop');
    expect(
      JSON.parse(unsealManifest(cert.privateKeyPem, pull)['.dockerconfigjson']).auths['reg.tenant42.example.com']
        .username,
    ).toBe('bot');

    const text = Object.values(readTree(repo)).join('\n');
    for (const planted of Object.values(CORP_PLANTED)) {
      expect(text).not.toContain(planted);
      expect(text).not.toContain(Buffer.from(planted).toString('base64').replace(/=+$/, ''));
    }
    // Files keep the reference hosts where Ingresses are patched; what every layer builds names only the new domain.
    for (const k of sync)
      expect(JSON.stringify(kustomize(join(repo, k.spec.path)))).not.toContain('stg.corp.example.org');
  });

  it('refuses an Ingress host outside the reference domain, naming it, in the full pass and before the infra pass writes', async () => {
    const stray = tempDir('corp-stray');
    writeCorpReference(stray, { strayHost: true });
    const repo = tempDir('corp-stray-out');
    const refusal =
      'clusters/staging/services/gateway.yaml Ingress gateway spec.rules[1].host: a host that does not end in the reference domain "stg.corp.example.org"';
    // The host is in a full-pass layer: the infra pass's rehearsal of the full pass finds it, and nothing is written.
    await expect(generate(base(repo, { templateDir: stray }))).rejects.toThrow(
      new GeneratorInputError(
        `refused before the infra pass writes anything, as the full pass that follows it would be: ${refusal}`,
      ),
    );
    expect(allFiles(repo)).toEqual([]);
    await generate(base(repo, { templateDir: stray, rehearseFullPass: false }));
    await expect(
      generate(base(repo, { templateDir: stray, pass: 'full', sealingCertPem: cert.certPem })),
    ).rejects.toThrow(new GeneratorInputError(refusal));
    expect(allFiles(join(repo, 'clusters/tenant-42')).some((f) => f.startsWith('services/'))).toBe(false);
  });
});
