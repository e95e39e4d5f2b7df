/**
 * `generate-gitops-env rotate` on an environment the command line scaffolded from the shipped reference (committed to
 * a git repository of its own), sealed for certificate A, after its cluster's controller moved to certificate B: every
 * SealedSecret opens with B's key and no longer with A's, with new values; every other file stays byte for byte; each
 * refusal writes nothing. The values are opened by the tests' own unsealing code, not the generator's.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { makeRsaCert } from '../support/certs';
import { allFiles, tempDir } from '../support/files';
import { generatorCli } from '../support/generator-cli';
import { REGISTRY, referenceRepository, scaffoldWithCli } from '../support/lifecycle';
import { unsealManifest } from '../support/unseal';

/** Every file of a tree, byte for byte. */
const snapshot = (root: string) => Object.fromEntries(allFiles(root).map((f) => [f, readFileSync(join(root, f))]));
/** Each SealedSecret of the environment: its file and manifest. */
const sealedSecrets = (root: string) =>
  allFiles(root)
    .filter((f) => f.startsWith('clusters/acme-prod/') && /\.ya?ml$/.test(f))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(root, file), 'utf8'))
        .map((d) => d.toJS())
        .filter((o) => o?.kind === 'SealedSecret')
        .map((manifest) => ({ file, manifest })),
    );
const opened = (root: string, keyPem: string): Record<string, Record<string, string>> =>
  Object.fromEntries(
    sealedSecrets(root).map(({ manifest }) => [manifest.metadata.name, unsealManifest(keyPem, manifest)]),
  );

describe('generate-gitops-env rotate', () => {
  const reference = referenceRepository('rotate-ref');
  const repo = tempDir('rotate-repo');
  const [certA, certB] = [makeRsaCert(), makeRsaCert()];
  const certFile = (cert: { certPem: string }, name: string) => {
    const file = join(tempDir('rotate-cert'), `${name}.pem`);
    writeFileSync(file, cert.certPem);
    return file;
  };
  const [fileA, fileB] = [certFile(certA, 'a'), certFile(certB, 'b')];

  beforeAll(async () => {
    expect(await scaffoldWithCli(repo, reference, 'acme-prod', fileA)).toMatchObject({ code: 0 });
    expect(sealedSecrets(repo).length).toBeGreaterThan(0);
  }, 120_000);

  const rotate = (...extra: string[]) =>
    generatorCli(
      [
        'rotate',
        '--repo',
        repo,
        '--template',
        reference,
        '--cluster-name',
        'acme-prod',
        '--sealing-cert',
        fileB,
        ...extra,
      ],
      REGISTRY,
    );

  it('refuses without --new-values, and without the registry credentials again, writing nothing', async () => {
    const before = snapshot(repo);
    const noValues = await rotate();
    expect([noValues.code, noValues.stderr]).toEqual([2, expect.stringContaining('give --new-values')]);
    const noRegistry = await generatorCli([
      ...['rotate', '--repo', repo, '--template', reference, '--cluster-name', 'acme-prod'],
      ...['--sealing-cert', fileB, '--new-values'],
    ]);
    expect([noRegistry.code, noRegistry.stderr]).toEqual([2, expect.stringContaining('registry pull credentials')]);
    const planned = await rotate('--new-values', '--dry-run', '--json');
    expect(planned.code).toBe(0);
    expect(JSON.parse(planned.stdout).files_replaced).toEqual(
      [...new Set(sealedSecrets(repo).map((s) => s.file))].sort(),
    );
    expect(snapshot(repo)).toEqual(before);
  });

  it('refuses an environment whose Secrets are SOPS-encrypted (not supported yet), writing nothing', async () => {
    const copy = tempDir('rotate-sops');
    cpSync(repo, copy, { recursive: true });
    const markerFile = join(copy, 'clusters/acme-prod/.gitops-scaffolder.json');
    const marker = JSON.parse(readFileSync(markerFile, 'utf8'));
    writeFileSync(markerFile, JSON.stringify({ ...marker, inputs: { ...marker.inputs, secrets_backend: 'sops' } }));
    const before = snapshot(copy);
    const r = await generatorCli(
      [
        ...['rotate', '--repo', copy, '--template', reference, '--cluster-name', 'acme-prod'],
        ...['--sealing-cert', fileB, '--new-values'],
      ],
      REGISTRY,
    );
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('SOPS')]);
    expect(snapshot(copy)).toEqual(before);
  });

  it('seals every credential anew for certificate B with new values; every other file stays byte for byte', async () => {
    const before = snapshot(repo);
    const valuesA = opened(repo, certA.privateKeyPem);
    const credentialFiles = new Set(sealedSecrets(repo).map((s) => s.file));
    const r = await rotate('--new-values');
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('rotated: review and commit the changes');

    const valuesB = opened(repo, certB.privateKeyPem);
    expect(Object.keys(valuesB).sort()).toEqual(Object.keys(valuesA).sort());
    for (const [name, values] of Object.entries(valuesB)) {
      expect([name, Object.keys(values).sort()]).toEqual([name, Object.keys(valuesA[name]).sort()]);
      // Generated passwords are new; registry pull credentials are the ones given again.
      if (!name.includes('registry')) expect([name, values]).not.toEqual([name, valuesA[name]]);
    }
    expect(() => opened(repo, certA.privateKeyPem)).toThrow();
    const after = snapshot(repo);
    for (const file of Object.keys(before))
      if (!credentialFiles.has(file)) expect([file, after[file]]).toEqual([file, before[file]]);
  });
});
