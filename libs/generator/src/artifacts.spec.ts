import { mkdtempSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GeneratorInputError } from './errors';
import { generatedArtifacts, materialise, repositoryPathOf } from './artifacts';

const generator = {
  spec: {
    artifacts: [
      { name: 'infra', copy: [{ from: '@repo/infrastructure/**', to: '@artifact/' }] },
      {
        name: 'apps',
        copy: [
          { from: '@repo/apps/base/**', to: '@artifact/base/' },
          { from: '@repo/apps/dev/**', to: '@artifact/dev/' },
          { from: '@repo/config/*.yaml', to: '@artifact/config/' },
          { from: '@repo/config/env.yaml', to: '@artifact/env.yaml' },
        ],
      },
    ],
  },
};

describe('ArtifactGenerator copy rules', () => {
  const [infra, apps] = generatedArtifacts(generator, 'artifacts.yaml');

  it('maps an artifact path back to the repository folder it comes from', () => {
    expect(repositoryPathOf(infra, './controllers')).toBe('infrastructure/controllers');
    expect(repositoryPathOf(apps, './dev')).toBe('apps/dev');
    expect(repositoryPathOf(apps, './base/podinfo')).toBe('apps/base/podinfo');
    expect(repositoryPathOf(apps, './config')).toBeUndefined();
  });

  it('reproduces the copy: recursive folders, single-level globs, a renamed file', () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-art-'));
    for (const [rel, text] of Object.entries({
      'apps/base/podinfo/a.yaml': 'a',
      'apps/dev/b.yaml': 'b',
      'config/c.yaml': 'c',
      'config/d.txt': 'd',
      'config/env.yaml': 'e',
      'config/sub/x.yaml': 'x',
    })) {
      mkdirSync(join(repo, rel, '..'), { recursive: true });
      writeFileSync(join(repo, rel), text);
    }
    const out = join(repo, 'out');
    materialise(apps, (p) => join(repo, p), out);
    expect(readdirSync(join(out, 'base/podinfo'))).toEqual(['a.yaml']);
    expect(readdirSync(join(out, 'dev'))).toEqual(['b.yaml']);
    expect(readdirSync(join(out, 'config')).sort()).toEqual(['c.yaml', 'env.yaml']);
    expect(readdirSync(out).sort()).toEqual(['base', 'config', 'dev', 'env.yaml']);
  });

  it('refuses rules it cannot reproduce', () => {
    expect(() =>
      generatedArtifacts(
        { spec: { artifacts: [{ name: 'x', copy: [{ from: '@repo/a/**/b.yaml', to: '@artifact/' }] }] } },
        'f',
      ),
    ).toThrow(GeneratorInputError);
    expect(() =>
      generatedArtifacts({ spec: { artifacts: [{ name: 'x', copy: [{ from: 'apps/**', to: '@artifact/' }] }] } }, 'f'),
    ).toThrow('is not "@<source>/<path>"');
  });
});
