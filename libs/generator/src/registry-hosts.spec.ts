import type { CredentialPlanEntry } from './credential-plan';
import { registryHostWarnings } from './registry-hosts';

const pullSecret: CredentialPlanEntry = {
  namespace: 'platform',
  name: 'registry',
  key: '.dockerconfigjson',
  class: 'registry',
};
const registry = { server: 'registry.demo.example.com', username: 'puller', password: 'x' };

describe('registryHostWarnings: cluster values that send images elsewhere than the pull secret', () => {
  it('warns about a registry value naming another registry, with both registries and the fix', () => {
    const [warning, ...rest] = registryHostWarnings(
      { REGISTRY_HOST: 'registry.example.net', DOMAIN: 'acme.io' },
      registry,
      [pullSecret],
    );
    expect(rest).toEqual([]);
    expect(warning).toContain('REGISTRY_HOST="registry.example.net"');
    expect(warning).toContain('built for registry.demo.example.com');
    expect(warning).toContain('--var REGISTRY_HOST=');
  });

  it('accepts the same registry with a scheme or a path, and docker config files naming it', () => {
    const values = {
      REGISTRY_HOST: 'https://registry.demo.example.com/v2/',
      IMAGE_REGISTRY: 'registry.demo.example.com/platform',
    };
    expect(registryHostWarnings(values, registry, [pullSecret])).toEqual([]);
    const file = { dockerConfigJson: JSON.stringify({ auths: { 'registry.demo.example.com': { auth: 'eDp5' } } }) };
    expect(registryHostWarnings(values, file, [pullSecret])).toEqual([]);
  });

  it('says nothing when the pass builds no pull secret, or for values that are not registries', () => {
    expect(registryHostWarnings({ REGISTRY_HOST: 'registry.example.net' }, registry, [])).toEqual([]);
    expect(registryHostWarnings({ REGISTRY_HOST: 'registry.example.net' }, undefined, [pullSecret])).toEqual([]);
    expect(registryHostWarnings({ REGISTRATION_URL: 'https://signup.example.net' }, registry, [pullSecret])).toEqual(
      [],
    );
  });
});
