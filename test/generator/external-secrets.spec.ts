import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generate, GenerateOptions } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { kustomize, readTree, tempDir, writeTree, yamlObjects } from '../support/files';
import { exampleFirstPass, writeFluxExampleReference } from '../support/flux-example-repo';

const externalSecret = (name: string, spec: object) =>
  stringify({ apiVersion: 'external-secrets.io/v1', kind: 'ExternalSecret', metadata: { name }, spec });
const STORE = { kind: 'ClusterSecretStore', name: 'vault' };

/**
 * ExternalSecrets in the shape home-ops style repositories keep them: beside the app in the
 * environment's overlay (remote keys under the environment's name), a dataFrom find by a name
 * pattern, and one in the shared base that names the environment too.
 */
function writeReference(root: string) {
  writeFluxExampleReference(root, {});
  const overlay = join(root, 'apps/staging/kustomization.yaml');
  writeTree(root, {
    'apps/staging/external-secrets.yaml': [
      externalSecret('podinfo-redis', {
        secretStoreRef: STORE,
        target: { name: 'podinfo-redis-auth' },
        data: [
          { secretKey: 'password', remoteRef: { key: 'kv/staging/podinfo/redis', property: 'password' } },
          { secretKey: 'stagingarea', remoteRef: { key: 'kv/common/stagingarea' } },
          // The reference domain (learned from its external-dns) moves to the new one.
          { secretKey: 'dsn', remoteRef: { key: 'db/staging.example.net/podinfo' } },
        ],
      }),
      externalSecret('podinfo-all', {
        secretStoreRef: STORE,
        dataFrom: [
          { extract: { key: 'clusters/staging/podinfo' } },
          { find: { path: 'apps/staging', name: { regexp: '^staging-.*' } } },
        ],
      }),
    ].join('---\n'),
    'apps/base/podinfo/external-secret.yaml': externalSecret('podinfo-shared', {
      secretStoreRef: STORE,
      data: [{ secretKey: 'token', remoteRef: { key: 'kv/staging/shared-token' } }],
    }),
  });
  writeFileSync(
    overlay,
    readFileSync(overlay, 'utf8').replace('  - routes.yaml\n', '  - routes.yaml\n  - external-secrets.yaml\n'),
  );
  const base = join(root, 'apps/base/podinfo/kustomization.yaml');
  writeFileSync(base, readFileSync(base, 'utf8') + '  - external-secret.yaml\n');
}

describe('ExternalSecrets: references kept, remote keys naming the reference moved, shown as external in the plan', () => {
  const reference = tempDir('es-reference');
  beforeAll(() => writeReference(reference));
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}) =>
    exampleFirstPass(repoDir, reference, extra);

  it('goes out in the first pass (no sealed-secrets controller needed) with its keys moved; the full pass changes nothing', async () => {
    const repo = tempDir('es-fleet');
    cpSync(reference, repo, { recursive: true });
    const before = readTree(join(repo, 'apps/base'));
    const infra = await generate(options(repo));
    const built = kustomize(join(repo, 'apps/acme')).filter((o) => o.kind === 'ExternalSecret');
    const byName = (name: string) => built.find((o) => o.metadata.name === name).spec;
    expect(byName('podinfo-redis').data.map((d: any) => d.remoteRef.key)).toEqual([
      'kv/acme/podinfo/redis',
      // Not inside a longer word.
      'kv/common/stagingarea',
      'db/acme.io/podinfo',
    ]);
    expect(byName('podinfo-redis').data[0].remoteRef.property).toBe('password');
    expect(byName('podinfo-all').dataFrom).toEqual([
      { extract: { key: 'clusters/acme/podinfo' } },
      { find: { path: 'apps/acme', name: { regexp: '^acme-.*' } } },
    ]);
    // The shared base is never edited: its key is listed, not moved.
    expect(byName('podinfo-shared').data[0].remoteRef.key).toBe('kv/staging/shared-token');
    expect(readTree(join(repo, 'apps/base'))).toEqual(before);
    expect(infra.summary.warnings.join('\n')).toMatch(
      /apps\/base\/podinfo\/external-secret\.yaml: ExternalSecret podinfo-shared remoteRef\.key "kv\/staging\/shared-token" names the reference environment/,
    );
    expect(infra.summary.remote_keys.filter((m) => m.moved).map((m) => [m.field, m.from, m.to])).toEqual([
      ['remoteRef.key', 'kv/staging/podinfo/redis', 'kv/acme/podinfo/redis'],
      ['remoteRef.key', 'db/staging.example.net/podinfo', 'db/acme.io/podinfo'],
      ['extract.key', 'clusters/staging/podinfo', 'clusters/acme/podinfo'],
      ['find.path', 'apps/staging', 'apps/acme'],
      ['find.name.regexp', '^staging-.*', '^acme-.*'],
    ]);
    const external = infra.summary.credential_plan.filter((e) => e.class === 'external');
    expect(external).toEqual(
      expect.arrayContaining([
        {
          namespace: 'podinfo',
          name: 'podinfo-redis-auth',
          key: 'password',
          class: 'external',
          store: 'ClusterSecretStore/vault',
          remote_key: 'kv/acme/podinfo/redis',
          external_secret: 'ExternalSecret podinfo-redis',
        },
        expect.objectContaining({ name: 'podinfo-shared', key: 'token', remote_key: 'kv/staging/shared-token' }),
      ]),
    );
    expect(external).toHaveLength(7);
    // References, not values: nothing is generated for them.
    expect(infra.credentials).toEqual([]);

    const full = await generate(options(repo, { pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    expect(full.summary.paths_written).toEqual([]);
    expect(yamlObjects(join(repo, 'apps/acme/external-secrets.yaml'))).toHaveLength(2);
  });
});
