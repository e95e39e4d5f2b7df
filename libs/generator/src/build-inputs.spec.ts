import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, writeTree } from '../../../test/support/files';
import { buildInputsDigest } from './build-inputs';
import { kustomizeBuild } from './validate';

/** A layer that reads a shared base outside its folder and a patch file below it. */
const TREE = {
  'base/kustomization.yaml': 'resources:\n  - cm.yaml\n',
  'base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  domain: example.com\n',
  'layer/kustomization.yaml': 'resources:\n  - ../base\npatches:\n  - path: patches/label.yaml\n',
  'layer/patches/label.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n    layer: one\n',
  'unrelated/notes.yaml': 'kind: Notes\n',
};

function tree(): string {
  const root = tempDir('build-inputs');
  writeTree(root, TREE);
  return root;
}

describe('buildInputsDigest', () => {
  it('is the same for the same files in another folder, and changes with any byte, file or setting the build reads', () => {
    const a = tree();
    const b = tree();
    const digest = (root: string, settings = ['kubectl']) => buildInputsDigest(join(root, 'layer'), settings);
    expect(digest(a)).toBe(digest(b));
    expect(digest(a, ['kubectl', 'loose'])).not.toBe(digest(a));

    writeFileSync(join(b, 'unrelated/notes.yaml'), 'kind: Other\n');
    expect(digest(b)).toBe(digest(a));

    const before = digest(b);
    writeFileSync(join(b, 'base/cm.yaml'), TREE['base/cm.yaml'].replace('example.com', 'example.org'));
    expect(digest(b)).not.toBe(before);

    const c = tree();
    writeFileSync(join(c, 'layer/patches/extra.yaml'), 'kind: Extra\n');
    expect(digest(c)).not.toBe(digest(a));
  });
});

describe('kustomizeBuild of identical inputs', () => {
  /** A kubectl that logs each kustomize build it runs, then runs the real one. */
  function countingKubectl(): { path: string; builds: () => number } {
    const dir = tempDir('kubectl');
    const log = join(dir, 'builds.log');
    writeFileSync(log, '');
    const path = join(dir, 'kubectl');
    writeFileSync(path, `#!/bin/sh\n[ "$1" = kustomize ] && echo build >> '${log}'\nexec kubectl "$@"\n`, {
      mode: 0o755,
    });
    return { path, builds: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
  }

  it('is built once; a changed byte builds again; what a caller edits never reaches the next caller', async () => {
    const kubectl = countingKubectl();
    const build = (root: string) =>
      kustomizeBuild(join(root, 'layer'), 'clusters/c/layer', { roots: [root], kubectl: kubectl.path });
    const first = tree();
    const built = await build(first);
    expect(kubectl.builds()).toBe(1);
    expect(built).toEqual([
      {
        body: expect.objectContaining({ data: { domain: 'example.com' } }),
        file: 'clusters/c/base/cm.yaml',
      },
    ]);
    built[0].body.data.domain = 'edited.example.net';

    const second = tempDir('build-inputs-copy');
    cpSync(first, second, { recursive: true });
    const again = await build(second);
    expect(kubectl.builds()).toBe(1);
    expect(again).toEqual([
      { body: expect.objectContaining({ data: { domain: 'example.com' } }), file: 'clusters/c/base/cm.yaml' },
    ]);

    writeFileSync(join(second, 'base/cm.yaml'), TREE['base/cm.yaml'].replace('example.com', 'example.org'));
    const changed = await build(second);
    expect(kubectl.builds()).toBe(2);
    expect(changed[0].body.data).toEqual({ domain: 'example.org' });
    expect(changed[0].body.metadata.labels).toEqual({ layer: 'one' });
  });
});
