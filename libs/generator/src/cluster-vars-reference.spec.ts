import { markFullPass } from './cluster-vars-reference';

const node = (name: string, extra: { dependsOn?: string[]; holdsSecrets?: boolean; applies?: string[] } = {}) => ({
  name,
  dependsOn: extra.dependsOn ?? [],
  holdsSecrets: extra.holdsSecrets ?? false,
  applies: extra.applies,
  fullPass: false,
});

describe('markFullPass over nested Kustomizations', () => {
  it('a nested Kustomization waits with the one that applies it, and what depends on it waits too, at any depth', () => {
    const nodes = [
      node('flux-system', { applies: ['infra', 'apps'] }),
      node('infra'),
      node('secrets', { holdsSecrets: true }),
      node('apps', { dependsOn: ['secrets'], applies: ['extras'] }),
      node('extras', { dependsOn: ['apps'], applies: ['smoke'] }),
      node('smoke', { dependsOn: ['extras'] }),
      node('monitoring', { dependsOn: ['smoke'] }),
    ];
    markFullPass(nodes);
    expect(Object.fromEntries(nodes.map((n) => [n.name, n.fullPass]))).toEqual({
      'flux-system': false,
      infra: false,
      secrets: true,
      apps: true,
      extras: true,
      smoke: true,
      monitoring: true,
    });
  });

  it('a nested Kustomization that holds secrets does not hold back the folder that applies it (the generator leaves it out of that folder)', () => {
    const nodes = [node('apps', { applies: ['credentials'] }), node('credentials', { holdsSecrets: true })];
    markFullPass(nodes);
    expect(nodes.map((n) => n.fullPass)).toEqual([false, true]);
  });

  it('refuses a dependsOn cycle', () => {
    expect(() => markFullPass([node('a', { dependsOn: ['b'] }), node('b', { dependsOn: ['a'] })])).toThrow(
      /depends on itself/,
    );
  });
});
