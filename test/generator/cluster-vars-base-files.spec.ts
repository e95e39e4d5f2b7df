import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions, SHIPPED_PHASED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { allFiles, kustomize, readTree, tempDir, yamlObjects } from '../support/files';

/**
 * A cluster-vars reference whose shared base holds a plain file beside the platform folder. The infra
 * pass opens the base into its first-pass entries; kustomize refuses a file outside a kustomization's
 * folder, so the file must reach the cluster through something kustomize accepts.
 */
describe('generator, cluster-vars model: a shared base with plain files', () => {
  const cert = makeRsaCert();
  const template = tempDir('vars-base-files');
  cpSync(SHIPPED_PHASED_TEMPLATE, template, { recursive: true });
  const baseKustomization = join(template, 'clusters/base/kustomization.yaml');
  writeFileSync(
    baseKustomization,
    readFileSync(baseKustomization, 'utf8').replace('  - ../../platform', '  - namespaces.yaml\n  - ../../platform'),
  );
  writeFileSync(
    join(template, 'clusters/base/namespaces.yaml'),
    'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shared-tools\n',
  );
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    templateDir: template,
    referenceEnv: 'dev',
    clusterName: 'basefiles',
    domain: 'basefiles.example.com',
    region: 'us-west-2',
    acmeEmail: 'ops@basefiles.example.com',
    pass: 'infra',
    // Both passes: the infra pass rehearses the full pass, whose pull secret needs them.
    registry: { server: 'r.example.com', username: 'u', password: 'RegistryPassword-1' },
    clusterVars: { EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::1:role/dns', CLUSTER_ISSUER: 'letsencrypt-prod' },
    ...extra,
  });

  it('copies the plain file into the cluster folder for the infra pass, and the full pass lists the base itself again', async () => {
    const repo = tempDir('vars-base-files-out');
    const infra = await generate(options(repo));
    expect(infra.summary.validated?.length).toBeGreaterThan(0);
    const root = yamlObjects(join(repo, 'clusters/basefiles/kustomization.yaml'))[0];
    expect(root.resources).toContain('infra-pass-files/clusters/base/namespaces.yaml');
    expect(readFileSync(join(repo, 'clusters/basefiles/infra-pass-files/clusters/base/namespaces.yaml'), 'utf8')).toBe(
      readFileSync(join(template, 'clusters/base/namespaces.yaml'), 'utf8'),
    );
    expect(
      kustomize(join(repo, 'clusters/basefiles')).some(
        (o) => o.kind === 'Namespace' && o.metadata.name === 'shared-tools',
      ),
    ).toBe(true);
    // The shared base itself is the template's, byte for byte.
    expect(readTree(join(repo, 'clusters/base'))).toEqual(readTree(join(template, 'clusters/base')));

    await generate(options(repo, { pass: 'full', sealingCertPem: cert.certPem }));
    expect(yamlObjects(join(repo, 'clusters/basefiles/kustomization.yaml'))[0].resources).toContain('../base');
    expect(allFiles(join(repo, 'clusters/basefiles')).some((f) => f.startsWith('infra-pass-files/'))).toBe(false);
  });
});
