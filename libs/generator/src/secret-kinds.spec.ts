import { CredentialPlan } from './credential-plan';
import { isAddressValue, isStructuredValue, keyKind } from './secret-kinds';

describe('keyKind: a key by what it holds', () => {
  it.each([
    // Encrypted (no value): the name and the object decide.
    ['server.toml', undefined, false, 'file'],
    ['repository.config', undefined, false, 'unknown'],
    ['token', undefined, true, 'file'],
    ['SECRET_DOMAIN_2', undefined, false, 'address'],
    ['CLOUDFLARE_RECORD_NAME', undefined, false, 'address'],
    ['SMTP_HOST', undefined, false, 'address'],
    ['SMTP_PASSWORD', undefined, false, 'third-party'],
    ['WIREGUARD_PRIVATE_KEY', undefined, false, 'third-party'],
    ['VPN_SERVICE_PROVIDER', undefined, false, 'third-party'],
    ['SECRET_GRAFANA_OAUTH_CLIENT_SECRET', undefined, false, 'third-party'],
    ['DISCORD_WEBHOOK_URL', undefined, false, 'third-party'],
    ['SENTRY_DSN', undefined, false, 'third-party'],
    ['AUTHELIA_JWT_SECRET', undefined, false, 'owned'],
    ['SECRET_KEY', undefined, false, 'owned'],
    ['admin-password', undefined, false, 'owned'],
    ['POSTGRES_USER', undefined, false, 'user'],
    ['GUILD_ID', undefined, false, 'plain'],
    ['HASS_LATITUDE', undefined, false, 'unknown'],
    // Readable: the value first.
    ['SECRET_DOMAIN_2', 'second.example.org', false, 'address'],
    ['upstream', 'db.data.svc.cluster.local', false, 'address'],
    ['router', '192.168.1.1', false, 'address'],
    ['config', 'server:\n  port: 8080\n', false, 'file'],
    ['ca', '-----BEGIN CERTIFICATE-----MIIB', false, 'file'],
    ['settings', '{"a":1}', false, 'file'],
    ['retries', '3', false, 'plain'],
    ['endpoint_url', 'https://s3.example.org/bucket', false, 'address'],
    ['password', 'hunter2-but-longer', false, 'owned'],
  ] as const)('%s (%j, file %s) is %s', (key, value, isFile, kind) => {
    expect(keyKind(key, value, isFile)).toBe(kind);
  });

  it('recognises hosts, domains, IPs and e-mails by value, and files by shape', () => {
    for (const v of ['example.com', '*.example.com', 'k8s-0.home.arpa', '10.0.0.1', 'fd00::1', 'ops@example.com'])
      expect(isAddressValue(v)).toBe(true);
    for (const v of ['hunter2', 'dGVzdA==', 'a b.com', 'x'.repeat(300)]) expect(isAddressValue(v)).toBe(false);
    expect(isStructuredValue('[1, 2]')).toBe(true);
    expect(isStructuredValue('[not json')).toBe(false);
  });
});

describe('CredentialPlan: readable values by what they are', () => {
  const body = (stringData: Record<string, string>) => ({
    namespace: 'apps',
    file: 'clusters/dev/app.yaml',
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app' }, stringData },
  });

  it('keeps hosts and domains, supplies files and unknown values, generates passwords', () => {
    const plan = CredentialPlan.build(
      [
        body({
          SECRET_DOMAIN_2: 'second.example.org',
          'config.yaml': 'ldap:\n  enabled: true\n  listen: 0.0.0.0:389\n',
          WIREGUARD_PRIVATE_KEY: 'wOEI9rqqbDwnN8/Bpp22sVz48T71vJ4fYmFWujulwUU=',
          DB_PASSWORD: 'dev-db-password-1',
          PIN: '8f3k2',
        }),
      ],
      { requireSupplied: false },
    );
    expect(plan.entries.map((e) => [e.key, e.class, e.recognised_by])).toEqual([
      ['config.yaml', 'supplied', 'file'],
      ['DB_PASSWORD', 'generated', undefined],
      ['PIN', 'supplied', 'value'],
      ['SECRET_DOMAIN_2', 'configuration', undefined],
      ['WIREGUARD_PRIVATE_KEY', 'supplied', 'name'],
    ]);
    expect(() => plan.valuesFor('apps', 'app')).toThrow(
      /3 value\(s\) the generator must not invent are missing .*apps\/app\/PIN, apps\/app\/WIREGUARD_PRIVATE_KEY, apps\/app\/config\.yaml \(a whole file\)/,
    );
  });

  it('rebuilds a readable file that carries the cluster’s own password instead of asking for it', () => {
    const plan = CredentialPlan.build(
      [body({ DB_PASSWORD: 'dev-db-password-1', 'app.yaml': 'db:\n  password: dev-db-password-1\n' })],
      { requireSupplied: true },
    );
    const values = plan.valuesFor('apps', 'app');
    expect(values['app.yaml'].toString()).toBe(`db:\n  password: ${values.DB_PASSWORD.toString()}\n`);
  });
});
