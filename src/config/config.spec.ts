import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { callerFor } from '../common/api-keys';
import { ConfigError, defaultGeneratorThreads, doesWork, loadConfig, servesApi } from './config';

const KEY = { API_KEY: 'a-key-of-sixteen-chars' };
const problemOf = (env: Record<string, string>) => {
  try {
    loadConfig({ ...KEY, ...env });
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
};

describe('configuration: one schema for every variable', () => {
  it('fills the documented defaults', () => {
    const c = loadConfig(KEY);
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      nats: expect.objectContaining({ servers: ['nats://127.0.0.1:4222'], description: 'nats://127.0.0.1:4222' }),
      executor: 'local',
      streamReplicas: 1,
      migrationsRun: true,
      runStepWorkers: true,
      shutdownGraceMs: 25_000,
      maxStepCrashes: 3,
    });
    expect(c.steps).toMatchObject({
      concurrency: 4,
      ackWaitMs: 30_000,
      stepTimeoutMs: 600_000,
      pushAttempts: 100,
      pushDeadlineMs: 300_000,
      referenceEnv: 'development',
    });
    expect(c.kubernetes).toMatchObject({
      namespace: 'kubeopera-provisioning',
      backoffLimit: 2,
      envSecretNames: ['gitops-scaffolder-runner'],
      imagePullSecretNames: [],
    });
    expect(c.jobWatchIntervalMs).toBe(10_000);
    // The pinned runner image is the release of this package (a release bumps both).
    expect(c.kubernetes.image).toBe(
      `ghcr.io/kubeopera/gitops-scaffolder-runner:${require('../../package.json').version}`,
    );
  });

  it('generates on one thread fewer than the cores it may use (at least one), or on GENERATOR_THREADS', () => {
    expect([1, 2, 4, 16].map((cores) => defaultGeneratorThreads(cores))).toEqual([1, 1, 3, 15]);
    expect(loadConfig(KEY).generation.threads).toBe(defaultGeneratorThreads(availableParallelism()));
    // A pod's CPU limit (the chart passes it as CPU_LIMIT) when lower than the node's cores Node counts.
    expect(loadConfig({ ...KEY, CPU_LIMIT: '1' }).generation.threads).toBe(1);
    expect(loadConfig({ ...KEY, CPU_LIMIT: '4096' }).generation.threads).toBe(
      defaultGeneratorThreads(availableParallelism()),
    );
    expect(loadConfig({ ...KEY, GENERATOR_THREADS: '3', CPU_LIMIT: '1' }).generation.threads).toBe(3);
    // Two passes share a thread (one plans while the other builds) unless told otherwise.
    expect(loadConfig(KEY).generation.passesPerThread).toBe(2);
    expect(loadConfig({ ...KEY, GENERATOR_PASSES_PER_THREAD: '1' }).generation.passesPerThread).toBe(1);
    expect(() => loadConfig({ ...KEY, GENERATOR_PASSES_PER_THREAD: '0' })).toThrow(/GENERATOR_PASSES_PER_THREAD/);
  });

  it('runs every role unless SERVICE_ROLE says api or worker; anything else is refused at start', () => {
    expect(loadConfig(KEY).role).toBe('all');
    const roles = (['api', 'worker', 'all'] as const).map((role) => loadConfig({ ...KEY, SERVICE_ROLE: role }).role);
    expect(roles.map((role) => [role, servesApi(role), doesWork(role)])).toEqual([
      ['api', true, false],
      ['worker', false, true],
      ['all', true, true],
    ]);
    expect(() => loadConfig({ ...KEY, SERVICE_ROLE: 'both' })).toThrow(/SERVICE_ROLE/);
  });

  it('reads numbers, flags and lists', () => {
    const c = loadConfig({
      ...KEY,
      PORT: '9090',
      STEP_CONCURRENCY: '8',
      JOB_WATCH_INTERVAL_SECONDS: '0.3',
      MIGRATIONS_RUN: 'false',
      GIT_ALLOWED_SCHEMES: 'https, file',
      SHUTDOWN_GRACE_SECONDS: '0',
    });
    expect(c).toMatchObject({
      port: 9090,
      migrationsRun: false,
      allowedSchemes: ['https', 'file'],
      jobWatchIntervalMs: 300,
      shutdownGraceMs: 0,
    });
    expect(c.steps.concurrency).toBe(8);
  });

  it('MAX_STEP_CRASHES: at least one crash before a step is parked, at most 100', () => {
    expect(loadConfig({ ...KEY, MAX_STEP_CRASHES: '1' }).maxStepCrashes).toBe(1);
    for (const bad of ['0', '101', '2.5', 'never'])
      expect(() => loadConfig({ ...KEY, MAX_STEP_CRASHES: bad })).toThrow(/MAX_STEP_CRASHES/);
  });

  it('reads the preview limits, with defaults', () => {
    expect(loadConfig(KEY)).toMatchObject({
      previewTimeoutMs: 120_000,
      quotas: { maxPreviewsPerMinutePerKey: 10, maxPreviewsInFlightPerKey: 2 },
    });
    const c = loadConfig({
      ...KEY,
      PREVIEW_TIMEOUT_SECONDS: '2.5',
      MAX_PREVIEWS_PER_MINUTE_PER_KEY: '4',
      MAX_PREVIEWS_IN_FLIGHT_PER_KEY: '1',
    });
    expect(c).toMatchObject({
      previewTimeoutMs: 2_500,
      quotas: { maxPreviewsPerMinutePerKey: 4, maxPreviewsInFlightPerKey: 1 },
    });
    // Names ending in _KEY have their values hidden, like every variable that could hold a secret.
    expect(problemOf({ MAX_PREVIEWS_PER_MINUTE_PER_KEY: '0' })).toContain(
      'MAX_PREVIEWS_PER_MINUTE_PER_KEY=*** must be >= 1',
    );
    expect(problemOf({ MAX_PREVIEWS_IN_FLIGHT_PER_KEY: 'many' })).toContain(
      'MAX_PREVIEWS_IN_FLIGHT_PER_KEY=*** must be integer',
    );
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['STEP_CONCURRENCY', '0'],
    ['STEP_CONCURRENCY', '1.5'],
    ['STREAM_REPLICAS', '7'],
    ['ACK_WAIT_SECONDS', '0'],
    ['MIGRATIONS_RUN', 'maybe'],
    ['EXECUTOR', 'docker'],
    ['LOG_LEVEL', 'loud'],
    ['GIT_ALLOWED_SCHEMES', 'https;rm -rf'],
    ['PREVIEW_TIMEOUT_SECONDS', '0'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(problemOf({ [name]: value })).toContain(`${name}=${JSON.stringify(value)}`);
  });

  it("NATS_REPLY_PREFIXES: the callers' inbox prefixes, by default the controller of deploy/nats and the clients' default _INBOX", () => {
    expect(loadConfig(KEY).natsReplyPrefixes).toEqual(['_INBOX_controller', '_INBOX']);
    expect(loadConfig({ ...KEY, NATS_REPLY_PREFIXES: ' _INBOX_controller , team.inbox ' }).natsReplyPrefixes).toEqual([
      '_INBOX_controller',
      'team.inbox',
    ]);
  });

  it.each([['$JS'], ['_INBOX.>'], ['_INBOX_controller,*'], ['a..b'], ['scaffold inbox']])(
    'refuses NATS_REPLY_PREFIXES=%s: a reply prefix is literal subject tokens',
    (value) => {
      expect(problemOf({ NATS_REPLY_PREFIXES: value })).toMatch(/^NATS_REPLY_PREFIXES: ".+" is not an inbox prefix/);
    },
  );

  it('refuses a NATS_REPLY_PREFIXES that names no prefix at all', () => {
    expect(problemOf({ NATS_REPLY_PREFIXES: ' , ' })).toBe('NATS_REPLY_PREFIXES: give at least one inbox prefix');
  });

  it('names every bad variable at once', () => {
    const message = problemOf({ PORT: 'abc', STEP_CONCURRENCY: '0' })!;
    expect(message).toContain('PORT');
    expect(message).toContain('STEP_CONCURRENCY');
  });

  it('names a too-short API key with the other bad settings, and every bad key', () => {
    const message = problemOf({
      API_KEY: 'short',
      API_KEYS: 'team-a:operator:also-short,team-b:owner:team-b-key-0123456789',
      PORT: 'abc',
      NATS_REPLY_PREFIXES: ' , ',
    })!;
    expect(message).toMatch(/^invalid configuration: /);
    for (const problem of [
      'PORT="abc" must be integer',
      'API key "default" is shorter than 16 characters',
      'API key "team-a" is shorter than 16 characters',
      'API_KEYS: key "team-b" has role "owner"',
      'NATS_REPLY_PREFIXES: give at least one inbox prefix',
    ])
      expect(message).toContain(problem);
  });

  it('refuses to start without an API key or with a short one, but the CLI tools need none', () => {
    expect(() => loadConfig({})).toThrow(/API_KEY/);
    expect(() => loadConfig({ API_KEY: 'short' })).toThrow(/shorter than 16/);
    expect(() => loadConfig({ API_KEYS: 'no-equals-sign' })).toThrow(/API_KEYS/);
    expect(loadConfig({}, { requireApiKey: false }).apiKeys.size).toBe(0);
  });

  describe('API_KEYS_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-file-'));
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const TEAM_KEY = 'team-a-key-0123456789abcdef';
    const HASHED_KEY = 'hashed-key-0123456789abcdef';

    it('reads named keys with roles and scopes, a key given only as its SHA-256, beside API_KEY', () => {
      const path = file(
        'good.yaml',
        `- name: team-a
  role: operator
  key: ${TEAM_KEY}
  repositories: [https://git.example.com/team-a]
  secret_namespaces: [team-a]
- name: auditor
  role: reader
  key_sha256: ${createHash('sha256').update(HASHED_KEY).digest('hex').toUpperCase()}
`,
      );
      const c = loadConfig({ ...KEY, API_KEYS_FILE: path, SECRET_NAMESPACES: 'capi-clusters, shared' });
      expect(callerFor(c.apiKeys, TEAM_KEY)).toEqual({
        name: 'team-a',
        role: 'operator',
        repositories: ['https://git.example.com/team-a'],
        secretNamespaces: ['team-a'],
      });
      expect(callerFor(c.apiKeys, HASHED_KEY)).toEqual({ name: 'auditor', role: 'reader' });
      expect(callerFor(c.apiKeys, KEY.API_KEY)).toEqual({ name: 'default', role: 'admin' });
      expect(() => callerFor(c.apiKeys, createHash('sha256').update(HASHED_KEY).digest('hex'))).toThrow(/X-Api-Key/);
      expect(c.secretNamespaces).toEqual(['capi-clusters', 'shared']);
      expect(loadConfig({ API_KEYS_FILE: path }).apiKeys.size).toBe(2);
    });

    it.each([
      [
        'not YAML',
        `- name: x\n  key: "${TEAM_KEY}\n  role: [`,
        /API_KEYS_FILE: not valid YAML \(line \d+, column \d+\)$/,
      ],
      ['not a list', `name: x\nrole: admin\nkey: ${TEAM_KEY}\n`, /API_KEYS_FILE: the file: must be array/],
      [
        'an unknown role',
        `- {name: x, role: root, key: ${TEAM_KEY}}\n`,
        /entry 1 \(name "x"\) role: must be equal to one of the allowed values/,
      ],
      [
        'both key and key_sha256',
        `- {name: x, role: admin, key: ${TEAM_KEY}, key_sha256: ${'a'.repeat(64)}}\n`,
        /entry 1 \(name "x"\): needs exactly one of key or key_sha256/,
      ],
      ['neither', `- {name: x, role: admin}\n`, /entry 1 \(name "x"\): needs exactly one of key or key_sha256/],
      [
        'a short key',
        `- {name: x, role: admin, key: ${TEAM_KEY.slice(0, 10)}}\n`,
        /entry 1 \(name "x"\) key: must NOT have fewer than 16 characters/,
      ],
      [
        'a digest that is not hex SHA-256',
        `- {name: x, role: admin, key_sha256: ${TEAM_KEY}}\n`,
        /entry 1 \(name "x"\) key_sha256: must match pattern/,
      ],
      [
        'an unknown field',
        `- {name: x, role: admin, key: ${TEAM_KEY}, repos: []}\n`,
        /entry 1 \(name "x"\): unknown field repos/,
      ],
      [
        'a bad namespace',
        `- {name: x, role: admin, key: ${TEAM_KEY}, secret_namespaces: [Kube_System]}\n`,
        /entry 1 \(name "x"\) secret_namespaces.0: must match pattern/,
      ],
      [
        'a prefix that is no URL',
        `- {name: x, role: admin, key: ${TEAM_KEY}, repositories: [git.example.com/a]}\n`,
        /key "x" repositories: "git.example.com\/a" is not a URL/,
      ],
      [
        'a name twice',
        `- {name: x, role: admin, key: ${TEAM_KEY}}\n- {name: x, role: reader, key: ${HASHED_KEY}}\n`,
        /key name "x" appears twice/,
      ],
      [
        'a name API_KEY has',
        `- {name: default, role: reader, key: ${HASHED_KEY}}\n`,
        /key name "default" is also given by API_KEY or API_KEYS/,
      ],
    ])('refuses to start on a file with %s, naming the problem and never a key', (what, text, message) => {
      const problem = problemOf({ API_KEYS_FILE: file(`${what.replaceAll(' ', '-')}.yaml`, text) });
      expect(problem).toMatch(message);
      expect(problem).not.toContain(TEAM_KEY.slice(0, 10));
      expect(problem).not.toContain(HASHED_KEY.slice(0, 10));
    });

    it('refuses a missing file and a bad SECRET_NAMESPACES', () => {
      expect(problemOf({ API_KEYS_FILE: join(dir, 'absent.yaml') })).toMatch(/API_KEYS_FILE: .* cannot be read/);
      expect(problemOf({ SECRET_NAMESPACES: 'kube-system,Bad_NS' })).toMatch(/SECRET_NAMESPACES/);
    });
  });
});
