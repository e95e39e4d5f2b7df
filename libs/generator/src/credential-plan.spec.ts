import { CredentialPlan, ReferenceSecret, SUPPLIED_ANNOTATION } from './credential-plan';

const secret = (
  namespace: string,
  name: string,
  stringData: Record<string, string>,
  annotations?: Record<string, string>,
): ReferenceSecret => ({
  namespace,
  file: `clusters/dev/${name}.yaml`,
  body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, ...(annotations ? { annotations } : {}) }, stringData },
});

const text = (plan: CredentialPlan, namespace: string, name: string) =>
  Object.fromEntries(Object.entries(plan.valuesFor(namespace, name)).map(([k, v]) => [k, v.toString('utf8')]));

/** A platform whose application Secret carries the database and broker passwords of two other Secrets. */
const REFERENCE = [
  secret('data', 'postgres-auth', {
    POSTGRES_USER: 'ledger',
    POSTGRES_PASSWORD: 'p@ss:w/rd-dev-1',
    POSTGRES_DB: 'ledger',
  }),
  secret('data', 'rabbitmq-auth', { RABBITMQ_DEFAULT_USER: 'shop', RABBITMQ_DEFAULT_PASS: 'RabbitDevPass-2' }),
  secret('shop', 'shop-db', {
    DATABASE_URL: 'postgres://ledger:p%40ss%3Aw%2Frd-dev-1@postgres.data.svc:5432/ledger?sslmode=disable',
    JDBC_URL: 'jdbc:postgresql://postgres.data.svc:5432/ledger?user=ledger&password=p%40ss%3Aw%2Frd-dev-1',
    AMQP_URL: 'amqp://shop:RabbitDevPass-2@rabbitmq.data.svc:5672/',
    'app.env': 'DB_PASSWORD=p@ss:w/rd-dev-1\nMQ_PASSWORD=RabbitDevPass-2\nLOG_LEVEL=info\n',
    'config.json': JSON.stringify({ broker: { user: 'shop', password: 'RabbitDevPass-2' } }),
    BASIC_AUTH: Buffer.from('shop:RabbitDevPass-2').toString('base64'),
    SESSION_KEY: 'dev-session-key-3',
  }),
  secret('shop', 'reporting', { DB_PASSWORD: 'p@ss:w/rd-dev-1', LONGER_PASSWORD: 'RabbitDevPass-2-and-more' }),
];

describe('CredentialPlan: credentials consistent across the Secrets of an environment', () => {
  const plan = CredentialPlan.build(REFERENCE, { requireSupplied: true });
  const pg = text(plan, 'data', 'postgres-auth');
  const mq = text(plan, 'data', 'rabbitmq-auth');
  const app = text(plan, 'shop', 'shop-db');

  it('generates fresh atomic credentials and keeps configuration', () => {
    expect(pg.POSTGRES_PASSWORD).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(pg.POSTGRES_USER).toMatch(/^u[a-z0-9]{15}$/);
    expect(pg.POSTGRES_DB).toBe('ledger');
    expect(app.SESSION_KEY).toMatch(/^[A-Za-z0-9]{40}$/);
  });

  it('rebuilds URLs and DSNs of another Secret with the new user and password', () => {
    const db = new URL(app.DATABASE_URL);
    expect([decodeURIComponent(db.username), decodeURIComponent(db.password), db.host, db.pathname, db.search]).toEqual(
      [pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, 'postgres.data.svc:5432', '/ledger', '?sslmode=disable'],
    );
    const amqp = new URL(app.AMQP_URL);
    expect([amqp.username, amqp.password, amqp.host]).toEqual([
      mq.RABBITMQ_DEFAULT_USER,
      mq.RABBITMQ_DEFAULT_PASS,
      'rabbitmq.data.svc:5672',
    ]);
    const jdbc = new URLSearchParams(app.JDBC_URL.split('?')[1]);
    expect([jdbc.get('user'), jdbc.get('password')]).toEqual([pg.POSTGRES_USER, pg.POSTGRES_PASSWORD]);
    // The username was also the database name: the database stays.
    expect(app.JDBC_URL.startsWith('jdbc:postgresql://postgres.data.svc:5432/ledger?')).toBe(true);
  });

  it('rebuilds .env and JSON blobs and base64 user:password pairs', () => {
    expect(app['app.env']).toBe(
      `DB_PASSWORD=${pg.POSTGRES_PASSWORD}\nMQ_PASSWORD=${mq.RABBITMQ_DEFAULT_PASS}\nLOG_LEVEL=info\n`,
    );
    expect(JSON.parse(app['config.json'])).toEqual({
      broker: { user: mq.RABBITMQ_DEFAULT_USER, password: mq.RABBITMQ_DEFAULT_PASS },
    });
    expect(Buffer.from(app.BASIC_AUTH, 'base64').toString()).toBe(
      `${mq.RABBITMQ_DEFAULT_USER}:${mq.RABBITMQ_DEFAULT_PASS}`,
    );
  });

  it('gives one new value to a password two Secrets share, and does not take a longer password for a derived value', () => {
    const reporting = text(plan, 'shop', 'reporting');
    expect(reporting.DB_PASSWORD).toBe(pg.POSTGRES_PASSWORD);
    expect(reporting.LONGER_PASSWORD).toMatch(/^[A-Za-z0-9]{40}$/);
  });

  it('lists the class of every key and the Secrets a derived key carries, never a value', () => {
    const byKey = Object.fromEntries(plan.entries.map((e) => [`${e.namespace}/${e.name}/${e.key}`, e]));
    expect(byKey['shop/shop-db/DATABASE_URL']).toEqual({
      namespace: 'shop',
      name: 'shop-db',
      key: 'DATABASE_URL',
      class: 'derived',
      from: ['data/postgres-auth', 'shop/reporting'],
    });
    expect(byKey['shop/shop-db/AMQP_URL'].from).toEqual(['data/rabbitmq-auth']);
    expect(byKey['data/postgres-auth/POSTGRES_DB'].class).toBe('configuration');
    expect(byKey['data/postgres-auth/POSTGRES_PASSWORD'].class).toBe('generated');
    expect(plan.relatedTo('data', 'rabbitmq-auth')).toEqual(['shop/shop-db']);
    const listed = JSON.stringify(plan.entries);
    for (const value of [...Object.values(pg), ...Object.values(app), 'p@ss:w/rd-dev-1', 'RabbitDevPass-2'])
      if (value !== 'ledger') expect(listed).not.toContain(value);
  });

  it('no reference credential survives anywhere', () => {
    const all = REFERENCE.flatMap((s) => Object.values(text(plan, s.namespace, s.body.metadata.name))).join('\n');
    for (const old of ['p@ss:w/rd-dev-1', 'p%40ss%3Aw%2Frd-dev-1', 'RabbitDevPass-2', 'dev-session-key-3'])
      expect(all).not.toContain(old);
  });
});

describe('CredentialPlan: supplied credentials', () => {
  const dns = (annotations?: Record<string, string>) =>
    secret(
      'cert-manager',
      'dns-provider',
      {
        'api-token': 'dev-dns-token-123',
        'zone-id': 'Z123456',
        webhook: 'https://hooks.example.com/?token=dev-dns-token-123',
      },
      annotations,
    );

  it('takes a key named by the annotation, or by a known name with a warning, exactly as given', () => {
    const annotated = CredentialPlan.build([dns({ [SUPPLIED_ANNOTATION]: 'api-token, zone-id' })], {
      requireSupplied: true,
      supplied: {
        'cert-manager/dns-provider/api-token': 'issued/by+dns=provider',
        'cert-manager/dns-provider/zone-id': 'ZNEW',
      },
    });
    expect(text(annotated, 'cert-manager', 'dns-provider')).toEqual({
      'api-token': 'issued/by+dns=provider',
      'zone-id': 'ZNEW',
      webhook: 'https://hooks.example.com/?token=issued/by+dns=provider',
    });
    expect(annotated.warnings).toEqual([]);
    expect(annotated.entries.map((e) => [e.key, e.class, e.recognised_by])).toEqual([
      ['api-token', 'supplied', 'annotation'],
      ['webhook', 'derived', undefined],
      ['zone-id', 'supplied', 'annotation'],
    ]);
    const byName = CredentialPlan.build([dns()], {
      requireSupplied: true,
      supplied: { 'cert-manager/dns-provider/api-token': 'T' },
    });
    expect(byName.entries.find((e) => e.key === 'api-token')).toMatchObject({
      class: 'supplied',
      recognised_by: 'name',
    });
    expect(byName.warnings).toEqual([
      expect.stringContaining(
        'cert-manager/dns-provider/api-token is taken as a supplied credential by its name alone',
      ),
    ]);
  });

  it('refuses to invent a missing one, listing every missing key, and never shows a value in the error', () => {
    const build = () =>
      CredentialPlan.build([dns({ [SUPPLIED_ANNOTATION]: 'api-token,zone-id' })], {
        requireSupplied: true,
        supplied: {},
      });
    expect(build).toThrow(/cert-manager\/dns-provider\/api-token, cert-manager\/dns-provider\/zone-id/);
    expect(build).not.toThrow(/dev-dns-token-123/);
    expect(() => CredentialPlan.build([dns({ [SUPPLIED_ANNOTATION]: 'nope' })], { requireSupplied: true })).toThrow(
      /names nope in gitops-scaffolder.io\/supplied, but has no such key/,
    );
  });
});

describe('CredentialPlan: declared templates', () => {
  const withTemplate = (template: string) =>
    secret(
      'shop',
      'app',
      { REDIS_URL: 'whatever-the-reference-had' },
      { 'gitops-scaffolder.io/template.REDIS_URL': template, [SUPPLIED_ANNOTATION]: '' },
    );
  const redis = secret(
    'data',
    'redis',
    { password: 'RedisDevPass-1', 'api-token': 'dev' },
    { [SUPPLIED_ANNOTATION]: 'api-token' },
  );

  it('builds a value from {{namespace/secret/key}} references, percent-encoding what goes into user information and query', () => {
    const plan = CredentialPlan.build(
      [
        redis,
        withTemplate(
          'redis://tok:{{data/redis/api-token}}@redis.data.svc:6379/0?password={{data/redis/password}}&t={{data/redis/api-token}}',
        ),
      ],
      {
        requireSupplied: true,
        supplied: { 'data/redis/api-token': 'p@ss:w/rd' },
      },
    );
    const url = text(plan, 'shop', 'app').REDIS_URL;
    expect(url).toBe(
      `redis://tok:p%40ss%3Aw%2Frd@redis.data.svc:6379/0?password=${text(plan, 'data', 'redis').password}&t=p%40ss%3Aw%2Frd`,
    );
    expect(decodeURIComponent(new URL(url).password)).toBe('p@ss:w/rd');
    expect(plan.entries.find((e) => e.key === 'REDIS_URL')).toEqual({
      namespace: 'shop',
      name: 'app',
      key: 'REDIS_URL',
      class: 'derived',
      from: ['data/redis'],
    });
  });

  it('refuses a reference to a key that does not exist, naming it', () => {
    expect(() =>
      CredentialPlan.build([redis, withTemplate('redis://:{{data/redis/pasword}}@redis:6379')], {
        requireSupplied: false,
      }),
    ).toThrow(/\{\{data\/redis\/pasword\}\}, which is no key/);
  });
});

describe("CredentialPlan: Secrets a Flux source reads (another system's credentials)", () => {
  const GIT_SOURCE = 'GitRepository apps/config (apps/staging/config.yaml)';
  const OCI_SOURCE = 'OCIRepository apps/manifests (apps/staging/manifests.yaml)';
  const githubAuth: ReferenceSecret = {
    ...secret('apps', 'github-auth', { username: 'flux-bot', password: 'ghp_referenceToken0123' }),
    usedBy: [GIT_SOURCE],
  };
  const pull: ReferenceSecret = {
    namespace: 'apps',
    file: 'apps/staging/ghcr-pull.yaml',
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/dockerconfigjson',
      metadata: { name: 'ghcr-pull' },
      stringData: { '.dockerconfigjson': '{"auths":{"ghcr.io":{"auth":"cmVm"}}}' },
    },
    usedBy: [OCI_SOURCE],
  };
  const app = secret('apps', 'app', { GIT_URL: 'https://flux-bot:ghp_referenceToken0123@github.com/acme/config' });
  const supplied = {
    'apps/github-auth/username': 'acme-bot',
    'apps/github-auth/password': 'ghp_issuedByGitHub',
    'apps/ghcr-pull/.dockerconfigjson': '{"auths":{"ghcr.io":{"auth":"YWNtZTp0b2tlbg=="}}}',
  };

  it('takes every key as supplied (a pull secret too, not from the registry settings), exactly as given, and says which source reads it', () => {
    const plan = CredentialPlan.build([githubAuth, pull, app], { requireSupplied: true, supplied });
    expect(text(plan, 'apps', 'github-auth')).toEqual({ username: 'acme-bot', password: 'ghp_issuedByGitHub' });
    expect(text(plan, 'apps', 'ghcr-pull')).toEqual({
      '.dockerconfigjson': supplied['apps/ghcr-pull/.dockerconfigjson'],
    });
    // A value elsewhere that carried the reference login now carries the supplied one.
    expect(text(plan, 'apps', 'app').GIT_URL).toBe('https://acme-bot:ghp_issuedByGitHub@github.com/acme/config');
    expect(plan.entries.filter((e) => e.name !== 'app')).toEqual([
      {
        namespace: 'apps',
        name: 'ghcr-pull',
        key: '.dockerconfigjson',
        class: 'supplied',
        recognised_by: 'source',
        used_by: [OCI_SOURCE],
      },
      {
        namespace: 'apps',
        name: 'github-auth',
        key: 'password',
        class: 'supplied',
        recognised_by: 'source',
        used_by: [GIT_SOURCE],
      },
      {
        namespace: 'apps',
        name: 'github-auth',
        key: 'username',
        class: 'supplied',
        recognised_by: 'source',
        used_by: [GIT_SOURCE],
      },
    ]);
  });

  it('refuses without them, naming each key, its Secret and the source that reads it; a declared template still wins', () => {
    const build = () => CredentialPlan.build([githubAuth, pull], { requireSupplied: true, supplied: {} });
    expect(build).toThrow(
      `apps/github-auth/password (Secret apps/github-auth is read by ${GIT_SOURCE}), apps/github-auth/username (Secret apps/github-auth is read by ${GIT_SOURCE}), apps/ghcr-pull/.dockerconfigjson (Secret apps/ghcr-pull is read by ${OCI_SOURCE})`,
    );
    expect(build).not.toThrow(/ghp_referenceToken/);
    const templated: ReferenceSecret = {
      ...githubAuth,
      body: {
        ...githubAuth.body,
        metadata: { name: 'github-auth', annotations: { 'gitops-scaffolder.io/template.username': 'flux-bot' } },
      },
    };
    const plan = CredentialPlan.build([templated], {
      requireSupplied: true,
      supplied: { 'apps/github-auth/password': 'ghp_issuedByGitHub' },
    });
    expect(plan.entries.map((e) => [e.key, e.class])).toEqual([
      ['password', 'supplied'],
      ['username', 'derived'],
    ]);
    expect(text(plan, 'apps', 'github-auth').username).toBe('flux-bot');
  });
});
