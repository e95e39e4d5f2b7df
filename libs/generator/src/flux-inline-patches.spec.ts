import { matchesLabelSelector, withParentPatches } from './flux-inline-patches';

const child = (labels: Record<string, string> = {}) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'echo-server', namespace: 'flux-system', labels },
  spec: { path: './kubernetes/main/apps/network/echo-server/app', postBuild: { substitute: { APP: 'echo' } } },
});

/** home-ops' cluster-apps: one patch giving every child its substitution sources, unless a label opts out. */
const parent = {
  kind: 'Kustomization',
  spec: {
    patches: [
      {
        patch: [
          'apiVersion: kustomize.toolkit.fluxcd.io/v1',
          'kind: Kustomization',
          'metadata:',
          '  name: not-used',
          'spec:',
          '  postBuild:',
          '    substituteFrom:',
          '      - kind: ConfigMap',
          '        name: cluster-settings',
        ].join('\n'),
        target: {
          group: 'kustomize.toolkit.fluxcd.io',
          kind: 'Kustomization',
          labelSelector: 'substitution.flux.home.arpa/disabled notin (true)',
        },
      },
    ],
  },
};

describe("a parent Kustomization's inline patches on the Kustomizations it applies", () => {
  it('merges the patch into every selected child, keeping its own name and values', () => {
    const patched = withParentPatches(parent, child());
    expect(patched.metadata.name).toBe('echo-server');
    expect(patched.spec.postBuild).toEqual({
      substitute: { APP: 'echo' },
      substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-settings' }],
    });
    expect(patched.spec.path).toBe('./kubernetes/main/apps/network/echo-server/app');
  });

  it('leaves a child the selector does not select as it is (the same object)', () => {
    const optedOut = child({ 'substitution.flux.home.arpa/disabled': 'true' });
    expect(withParentPatches(parent, optedOut)).toBe(optedOut);
    const otherGroup = { ...child(), apiVersion: 'source.toolkit.fluxcd.io/v1' };
    expect(withParentPatches(parent, otherGroup)).toBe(otherGroup);
  });

  it('reports a JSON6902 patch it does not read', () => {
    const unread: unknown[] = [];
    const json6902 = {
      spec: { patches: [{ patch: '- op: add\n  path: /spec/wait\n  value: true', target: { kind: 'Kustomization' } }] },
    };
    expect(withParentPatches(json6902, child(), (t) => unread.push(t))).toEqual(child());
    expect(unread).toEqual([{ kind: 'Kustomization' }]);
  });
});

describe('label selectors as kustomize reads them', () => {
  const labels = { app: 'web', tier: 'front' };
  it.each([
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app in (api, web)', true],
    ['app notin (api, web)', false],
    ['missing notin (x)', true],
    ['app=web,tier in (front,back)', true],
    ['app=web,tier=back', false],
  ])('%s -> %s', (selector, expected) => {
    expect(matchesLabelSelector(selector, labels)).toBe(expected);
  });
});
