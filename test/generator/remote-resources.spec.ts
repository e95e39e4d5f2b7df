import { cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  generate,
  GenerateOptions,
  GeneratorInputError,
  preview,
  SHIPPED_PHASED_TEMPLATE,
  SHIPPED_TEMPLATE,
} from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { allFiles, tempDir } from '../support/files';
import { EXAMPLE_HOSTS, writeFluxExampleReference } from '../support/flux-example-repo';
import { useListeners } from '../support/listeners';

/**
 * A reference (or a target repository) whose kustomization names a remote resource: the generator
 * refuses it before any build, naming the file, and nothing connects to the listeners it names.
 */
describe('generator: remote resources in a reference are refused before any build', () => {
  const cert = makeRsaCert();
  const listeners = useListeners();

  /** A copy of a reference with `entry` added to the resources of one kustomization. */
  function referenceWith(source: string, file: string, entry: string): string {
    const root = tempDir('remote-ref');
    cpSync(source, root, { recursive: true });
    const path = join(root, file);
    writeFileSync(path, readFileSync(path, 'utf8').replace(/^resources:\n/m, `resources:\n  - ${entry}\n`));
    return root;
  }

  const options = (
    templateDir: string,
    referenceEnv: string,
    extra: Partial<GenerateOptions> = {},
  ): GenerateOptions => ({
    repoDir: tempDir('remote-fleet'),
    templateDir,
    referenceEnv,
    clusterName: 'acme',
    domain: 'acme.io',
    region: 'us-east-1',
    acmeEmail: 'ops@acme.io',
    pass: 'full',
    sealingCertPem: cert.certPem,
    registry: { server: 'registry.acme.io', username: 'u', password: 'RegistryPw-0123456789' },
    ...extra,
  });

  const entries = () => [
    `http://127.0.0.1:${listeners.http.port}/evil.yaml`,
    `git::http://127.0.0.1:${listeners.tcp.port}/org/repo.git//deploy?ref=main`,
    `ssh://git@127.0.0.1:${listeners.tcp.port}/org/repo.git`,
  ];

  it('overlay model (the shipped template): a remote base in a shared folder, by generate and by preview', async () => {
    for (const entry of entries()) {
      const reference = referenceWith(SHIPPED_TEMPLATE, 'base/kustomization.yaml', entry);
      const opts = options(reference, 'development');
      await expect(generate(opts)).rejects.toThrow(GeneratorInputError);
      await expect(generate(opts)).rejects.toThrow(
        `base/kustomization.yaml: resources entry ${JSON.stringify(entry)} is a remote resource`,
      );
      await expect(preview(options(reference, 'development'))).rejects.toThrow(
        /^base\/kustomization\.yaml: resources entry/,
      );
      expect(allFiles(opts.repoDir)).toEqual([]);
    }
    expect(listeners.http.connections + listeners.tcp.connections).toBe(0);
  });

  it('overlay model: a remote resource in the target repository, in a shared folder the new layers build from', async () => {
    for (const entry of entries()) {
      const opts = options(SHIPPED_TEMPLATE, 'development');
      cpSync(join(SHIPPED_TEMPLATE, 'base'), join(opts.repoDir, 'base'), { recursive: true });
      const file = join(opts.repoDir, 'base/kustomization.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^resources:\n/m, `resources:\n  - ${entry}\n`));
      await expect(preview(opts)).rejects.toThrow(
        `base/kustomization.yaml: resources entry ${JSON.stringify(entry)} is a remote resource`,
      );
      await expect(generate(opts)).rejects.toThrow(GeneratorInputError);
      expect(allFiles(opts.repoDir).filter((f) => !f.startsWith('base/'))).toEqual([]);
    }
    expect(listeners.http.connections + listeners.tcp.connections).toBe(0);
  });

  it('cluster-vars model (the phased template): a remote resource in what a Flux Kustomization applies', async () => {
    const reference = referenceWith(
      SHIPPED_PHASED_TEMPLATE,
      'platform/namespaces/app/kustomization.yaml',
      entries()[0],
    );
    await expect(generate(options(reference, 'dev', { pass: 'infra' }))).rejects.toThrow(
      /^platform\/namespaces\/app\/kustomization\.yaml: resources entry "http:\/\/127\.0\.0\.1:\d+\/evil\.yaml" is a remote resource/,
    );
    expect(listeners.http.connections + listeners.tcp.connections).toBe(0);
  });

  it("Flux example layout: a remote resource in a folder the cluster's Kustomization applies", async () => {
    const example = tempDir('remote-example');
    writeFluxExampleReference(example);
    const reference = referenceWith(example, 'infrastructure/controllers/kustomization.yaml', entries()[1]);
    const repo = tempDir('remote-example-fleet');
    cpSync(reference, repo, { recursive: true });
    await expect(
      generate(options(reference, 'staging', { repoDir: repo, pass: 'infra', hostMap: {} })),
    ).rejects.toThrow(/^infrastructure\/controllers\/kustomization\.yaml: resources entry "git::http/);
    expect(listeners.http.connections + listeners.tcp.connections).toBe(0);
  });

  describe('a target repository that reaches out of itself: refused before a build reads there', () => {
    /** A folder outside the repository, as other runs' working copies and the service's files are. */
    function outsideFolder(withKustomization: boolean): string {
      const outside = tempDir('outside-the-repo');
      writeFileSync(
        join(outside, 'other-tenant.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other-tenant\ndata:\n  value: not-yours\n',
      );
      if (withKustomization) writeFileSync(join(outside, 'kustomization.yaml'), 'resources:\n  - other-tenant.yaml\n');
      return outside;
    }
    function exampleFleet(): { reference: string; repo: string } {
      const reference = tempDir('outside-example');
      writeFluxExampleReference(reference);
      const repo = tempDir('outside-example-fleet');
      cpSync(reference, repo, { recursive: true });
      return { reference, repo };
    }
    const infra = (reference: string, repo: string) =>
      generate(
        options(reference, 'staging', {
          repoDir: repo,
          pass: 'infra',
          hostMap: { [EXAMPLE_HOSTS.podinfo]: 'podinfo.acme.io' },
        }),
      );

    it('a kustomization entry climbing out with ../ (kustomize loads folders outside its root)', async () => {
      const outside = outsideFolder(true);
      const { reference, repo } = exampleFleet();
      const file = join(repo, 'infrastructure/controllers/kustomization.yaml');
      const climb = relative(join(repo, 'infrastructure/controllers'), outside);
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^resources:\n/m, `resources:\n  - ${climb}\n`));
      await expect(infra(reference, repo)).rejects.toThrow(
        `infrastructure/controllers/kustomization.yaml: resources entry ${JSON.stringify(climb)} leads outside the repository`,
      );
    });

    it('a symbolic link out of the repository named as a kustomization entry (kustomize follows it)', async () => {
      const outside = outsideFolder(true);
      const { reference, repo } = exampleFleet();
      symlinkSync(outside, join(repo, 'infrastructure/controllers/linked'));
      const file = join(repo, 'infrastructure/controllers/kustomization.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^resources:\n/m, 'resources:\n  - linked\n'));
      // The working copy is checked first: a link out of it is refused before any kustomization is read (#47).
      await expect(infra(reference, repo)).rejects.toThrow(
        'the working copy has links that lead out of it, which are never read or written through: infrastructure/controllers/linked',
      );
    });

    it('a manifest link out of a folder without kustomization.yaml: refused unread (a YAML error would quote the file)', async () => {
      const outside = tempDir('outside-the-repo');
      writeFileSync(join(outside, 'service-secret'), 'user: pass: S3cretValue-from-outside\n');
      const { reference, repo } = exampleFleet();
      rmSync(join(repo, 'infrastructure/controllers/kustomization.yaml'));
      symlinkSync(join(outside, 'service-secret'), join(repo, 'infrastructure/controllers/leak.yaml'));
      const failure = (await infra(reference, repo).catch((e: Error) => e)) as Error;
      expect(failure).toBeInstanceOf(GeneratorInputError);
      expect(failure.message).toMatch(/links that lead out of it.*: infrastructure\/controllers\/leak\.yaml/);
      expect(failure.message).not.toContain('S3cretValue');
    });
  });
});
