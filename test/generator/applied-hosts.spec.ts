import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, hostMapProblem, refreshReferenceFacts } from '#libs/generator';
import { tempDir } from '../support/files';
import { EXAMPLE_HOSTS, exampleFirstPass, writeFluxExampleReference } from '../support/flux-example-repo';

const PLACEHOLDER = 'podinfo.example.com';

/** Flux's example with a host in the shared base that every environment's overlay replaces (a placeholder). */
function referenceWithPlaceholder(): string {
  const reference = tempDir('applied-hosts-reference');
  writeFluxExampleReference(reference);
  const release = join(reference, 'apps/base/podinfo/release.yaml');
  writeFileSync(
    release,
    readFileSync(release, 'utf8').replace(
      '      className: nginx\n',
      `      className: nginx\n      hosts:\n        - host: ${PLACEHOLDER}\n          paths:\n            - path: /\n              pathType: ImplementationSpecific\n`,
    ),
  );
  return reference;
}

describe('hosts are those Flux applies: a shared placeholder the overlay replaces needs no --host-map', () => {
  it('scaffolds without a map entry for the placeholder, and the new cluster has none of it', async () => {
    const reference = referenceWithPlaceholder();
    const repo = tempDir('applied-hosts-fleet');
    cpSync(reference, repo, { recursive: true });
    const { summary } = await generate(exampleFirstPass(repo, reference));
    expect(summary.hosts.map((h) => h.from)).not.toContain(PLACEHOLDER);
    expect(summary.hosts).toContainEqual({ from: EXAMPLE_HOSTS.podinfo, to: 'podinfo.acme.io' });
    expect(readFileSync(join(repo, 'apps/base/podinfo/release.yaml'), 'utf8')).toContain(PLACEHOLDER);
  });

  it('a host the overlay does not replace still needs its place, reported with where it is', async () => {
    const reference = referenceWithPlaceholder();
    writeFileSync(
      join(reference, 'apps/staging/podinfo-values.yaml'),
      readFileSync(join(reference, 'apps/staging/podinfo-values.yaml'), 'utf8').replace(
        / {4}ingress:[\s\S]*$/,
        '    replicaCount: 2\n',
      ),
    );
    const repo = tempDir('applied-hosts-fleet');
    cpSync(reference, repo, { recursive: true });
    await expect(generate(exampleFirstPass(repo, reference, { hostMap: {} }))).rejects.toThrow(
      `${PLACEHOLDER} (apps/base/podinfo/release.yaml HelmRelease podinfo/podinfo spec.values.ingress.hosts[0].host)`,
    );
  });

  it("the service's request check reads the reference the same way once it was read with its builds", async () => {
    const reference = referenceWithPlaceholder();
    const given = { domain: 'acme.io', hostMap: { [EXAMPLE_HOSTS.podinfo]: 'podinfo.acme.io' } };
    // Read from the files alone, the placeholder is a host with no place...
    expect(hostMapProblem(reference, 'staging', given)?.problem).toContain(PLACEHOLDER);
    // ...read as Flux applies it (what RequestChecks does before checking a request), it is not there.
    await refreshReferenceFacts(reference, 'staging');
    expect(hostMapProblem(reference, 'staging', given)).toBeNull();
  });
});
