import { passCheckoutFolders } from './checkout-scope';

const marker = (dir: string) => `${dir}/.gitops-scaffolder.json`;

describe("a pass's checkout folders (shipped template, reference environment development)", () => {
  const fleet = [
    'README.md',
    '.sops.yaml',
    'base/web/deployment.yaml',
    'base/kustomization.yaml',
    'clusters/kustomization.yaml',
    'clusters/development/infrastructure/kustomization.yaml',
    marker('clusters/apple'),
    'clusters/apple/apps/kustomization.yaml',
    marker('clusters/pear'),
    'clusters/pear/apps/kustomization.yaml',
    marker('clusters/kiwi'),
    'clusters/kiwi/apps/kustomization.yaml',
    'clusters/hand-written/kustomization.yaml',
  ];

  it("leaves out the folders marked as other clusters' and keeps everything else, its own folder included", () => {
    expect(passCheckoutFolders({ clusterName: 'kiwi' }, fleet)).toEqual([
      'base',
      'clusters/development',
      'clusters/hand-written',
      'clusters/kiwi',
    ]);
  });

  it('keeps the place of a new cluster’s folder beside the others, so the files above it are checked out', () => {
    expect(passCheckoutFolders({ clusterName: 'plum' }, fleet)).toEqual([
      'base',
      'clusters/development',
      'clusters/hand-written',
      'clusters/plum',
    ]);
  });

  it('keeps a marked folder that is the reference environment or names it', () => {
    const folders = passCheckoutFolders({ clusterName: 'plum', referenceEnv: 'apple' }, fleet);
    expect(folders).toContain('clusters/apple');
    expect(folders).not.toContain('clusters/pear');
  });

  it('checks out the whole tree when there is no other cluster, or the pass moves paths into other repositories', () => {
    expect(passCheckoutFolders({ clusterName: 'kiwi' }, ['README.md', marker('clusters/kiwi')])).toBeNull();
    expect(passCheckoutFolders({ clusterName: 'kiwi', pathMap: { base: 'https://x/y.git//base' } }, fleet)).toBeNull();
  });

  it('walks into any folder holding other clusters (overlays under apps/ too)', () => {
    const folders = passCheckoutFolders({ clusterName: 'kiwi' }, [
      marker('apps/apple'),
      'apps/apple/a.yaml',
      'apps/base/b.yaml',
      marker('clusters/kiwi'),
    ]);
    expect(folders).toEqual(['apps/base', 'apps/kiwi', 'clusters']);
  });
});
