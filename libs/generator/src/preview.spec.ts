import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/files';
import { GeneratorInputError } from './errors';
import { maskProtected, preview } from './preview';

const options = (repoDir: string) => ({
  repoDir,
  clusterName: 'p',
  domain: 'p.example.com',
  region: 'eu-west-1',
  acmeEmail: 'ops@p.example.com',
  pass: 'infra' as const,
  // The infra pass rehearses the full pass, whose pull secret needs them.
  registry: { server: 'registry.p.example.com', username: 'puller', password: 'RegistryPassword-1' },
  validate: false,
});

describe('preview', () => {
  it('refuses a working copy with a link out of it, and writes nothing through it', async () => {
    const repo = tempDir('preview-links');
    const outside = tempDir('preview-outside');
    symlinkSync(outside, join(repo, 'clusters'));
    await expect(preview(options(repo))).rejects.toThrow(
      new GeneratorInputError(
        'the working copy has links that lead out of it, which are never read or written through: clusters',
      ),
    );
    const relativeOut = tempDir('preview-links-rel');
    mkdirSync(join(relativeOut, 'docs'));
    symlinkSync('../../', join(relativeOut, 'docs', 'up'));
    await expect(preview(options(relativeOut))).rejects.toThrow(/docs\/up/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('lists what a pass adds and leaves the working copy as it was', async () => {
    const repo = tempDir('preview-plain');
    writeFileSync(join(repo, 'README.md'), '# fleet\n');
    const { changes } = await preview(options(repo));
    expect(changes.some((c) => c.path === 'clusters/p/infrastructure/external-dns.yaml' && c.change === 'added')).toBe(
      true,
    );
    expect(existsSync(join(repo, 'clusters'))).toBe(false);
  });

  it('names files copied unchanged from the reference instead of showing their content', async () => {
    const { changes } = await preview(options(tempDir('preview-copies')));
    const copy = changes.find((c) => c.path === 'clusters/p/infrastructure/cert-manager.yaml')!;
    expect(copy).toMatchObject({
      change: 'added',
      copied_from: 'clusters/development/infrastructure/cert-manager.yaml',
    });
    expect(copy.diff).toMatch(
      /^clusters\/p\/infrastructure\/cert-manager\.yaml: copied unchanged from the reference's clusters\/development\/infrastructure\/cert-manager\.yaml \(\d+ lines, not shown\)\n$/,
    );
    // A file the pass rewrites (external-dns gets the new domain) is a diff.
    const rewritten = changes.find((c) => c.path === 'clusters/p/infrastructure/external-dns.yaml')!;
    expect(rewritten.copied_from).toBeUndefined();
    expect(rewritten.diff).toContain('+++ b/clusters/p/infrastructure/external-dns.yaml');
  });

  it('masks SOPS values and metadata as a count of keys', () => {
    const masked = maskProtected(
      'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  a: ENC[AES256_GCM,data:xx]\n  b: ENC[AES256_GCM,data:yy]\nsops:\n  mac: ENC[AES256_GCM,data:zz]\n',
      's.yaml',
    );
    expect(masked).toContain('stringData: "<encrypted: 2 keys>"');
    expect(masked).toMatch(/sops: "?<sops metadata>"?/);
    expect(masked).not.toContain('ENC[');
  });
});
