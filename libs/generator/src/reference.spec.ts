import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GeneratorInputError } from './errors';
import { collectTree, generatedResources } from './reference';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'reference-spec-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

const cm = (name: string, annotations = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${annotations}data: {a: b}\n`;

describe('generatedResources: the kustomization kustomize-controller generates for a folder without one', () => {
  it('lists YAML files down the tree in lexical order, a subfolder with its own kustomization as one entry, nothing hidden or not YAML', () => {
    const root = tree({
      'apps/b.yaml': cm('b'),
      'apps/a.yml': cm('a'),
      'apps/empty.yaml': '# only a comment\n',
      'apps/deep/er/c.yaml': cm('c'),
      'apps/kustomized/kustomization.yaml': 'resources:\n  - d.yaml\n',
      'apps/kustomized/d.yaml': cm('d'),
      'apps/kustomized/not-listed.yaml': cm('e'),
      'apps/list.yaml': 'apiVersion: v1\nkind: ConfigMapList\nitems: []\n',
      'apps/README.md': '# notes\n',
      'apps/.sops.yaml': 'creation_rules: []\n',
      'apps/.hidden/f.yaml': cm('f'),
    });
    expect(generatedResources(root, 'apps')).toEqual([
      'a.yml',
      'b.yaml',
      'deep/er/c.yaml',
      'empty.yaml',
      'kustomized',
      'list.yaml',
    ]);
  });

  it('refuses a YAML file that is no Kubernetes object, as Flux fails the Kustomization on it', () => {
    const root = tree({ 'apps/a.yaml': cm('a'), 'apps/values.yaml': 'replicaCount: 2\n' });
    expect(() => generatedResources(root, 'apps')).toThrow(GeneratorInputError);
    expect(() => generatedResources(root, 'apps')).toThrow(
      /apps\/values.yaml is not a Kubernetes manifest \(no kind\)/,
    );
    const unnamed = tree({ 'apps/a.yaml': 'apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n' });
    expect(() => generatedResources(unnamed, 'apps')).toThrow(/no metadata.name/);
  });
});

describe('collectTree of a Flux-applied folder', () => {
  const root = tree({
    'apps/a.yaml': cm('a'),
    'apps/local.yaml': cm('local', "  annotations: {config.kubernetes.io/local-config: 'true'}\n"),
    'apps/sub/kustomization.yaml': 'namespace: sub\nresources:\n  - b.yaml\n',
    'apps/sub/b.yaml': cm('b'),
  });

  it('reads the generated kustomization; objects kustomize drops as local configuration are left out', () => {
    const objects = collectTree(root, 'clusters/dev', 'apps', [], { fluxApplied: true }).objects;
    expect(objects.map((o) => [o.file, o.name, o.namespace])).toEqual([
      ['apps/a.yaml', 'a', undefined],
      ['apps/sub/b.yaml', 'b', 'sub'],
    ]);
  });

  it('a folder that is only a resource of a kustomization still needs its own kustomization file', () => {
    expect(() => collectTree(root, 'clusters/dev', 'apps', [])).toThrow(
      /apps is referenced as a resource but has no kustomization.yaml/,
    );
  });
});
