import { ConfigError, loadConfig } from './config';

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
    });
    expect(c.steps).toMatchObject({ concurrency: 4, ackWaitMs: 30_000, stepTimeoutMs: 600_000, pushAttempts: 100, pushDeadlineMs: 300_000, referenceEnv: 'development' });
    expect(c.kubernetes).toMatchObject({ namespace: 'kubeopera-provisioning', backoffLimit: 2, envSecretNames: ['gitops-scaffolder-runner'], imagePullSecretNames: [] });
    expect(c.jobWatchIntervalMs).toBe(10_000);
    // The pinned runner image is the release of this package (a release bumps both).
    expect(c.kubernetes.image).toBe(`ghcr.io/kubeopera/gitops-scaffolder-runner:${require('../../package.json').version}`);
  });

  it('reads numbers, flags and lists', () => {
    const c = loadConfig({ ...KEY, PORT: '9090', STEP_CONCURRENCY: '8', JOB_WATCH_INTERVAL_SECONDS: '0.3', MIGRATIONS_RUN: 'false', GIT_ALLOWED_SCHEMES: 'https, file', SHUTDOWN_GRACE_SECONDS: '0' });
    expect(c).toMatchObject({ port: 9090, migrationsRun: false, allowedSchemes: ['https', 'file'], jobWatchIntervalMs: 300, shutdownGraceMs: 0 });
    expect(c.steps.concurrency).toBe(8);
  });

  it('reads the preview limits, with defaults', () => {
    expect(loadConfig(KEY)).toMatchObject({ previewTimeoutMs: 120_000, quotas: { maxPreviewsPerMinutePerKey: 10, maxPreviewsInFlightPerKey: 2 } });
    const c = loadConfig({ ...KEY, PREVIEW_TIMEOUT_SECONDS: '2.5', MAX_PREVIEWS_PER_MINUTE_PER_KEY: '4', MAX_PREVIEWS_IN_FLIGHT_PER_KEY: '1' });
    expect(c).toMatchObject({ previewTimeoutMs: 2_500, quotas: { maxPreviewsPerMinutePerKey: 4, maxPreviewsInFlightPerKey: 1 } });
    // Names ending in _KEY have their values hidden, like every variable that could hold a secret.
    expect(problemOf({ MAX_PREVIEWS_PER_MINUTE_PER_KEY: '0' })).toContain('MAX_PREVIEWS_PER_MINUTE_PER_KEY=*** must be >= 1');
    expect(problemOf({ MAX_PREVIEWS_IN_FLIGHT_PER_KEY: 'many' })).toContain('MAX_PREVIEWS_IN_FLIGHT_PER_KEY=*** must be integer');
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
    expect(loadConfig({ ...KEY, NATS_REPLY_PREFIXES: ' _INBOX_controller , team.inbox ' }).natsReplyPrefixes).toEqual(['_INBOX_controller', 'team.inbox']);
  });

  it.each([['$JS'], ['_INBOX.>'], ['_INBOX_controller,*'], ['a..b'], ['scaffold inbox']])('refuses NATS_REPLY_PREFIXES=%s: a reply prefix is literal subject tokens', (value) => {
    expect(problemOf({ NATS_REPLY_PREFIXES: value })).toMatch(/^NATS_REPLY_PREFIXES: ".+" is not an inbox prefix/);
  });

  it('refuses a NATS_REPLY_PREFIXES that names no prefix at all', () => {
    expect(problemOf({ NATS_REPLY_PREFIXES: ' , ' })).toBe('NATS_REPLY_PREFIXES: give at least one inbox prefix');
  });

  it('names every bad variable at once', () => {
    const message = problemOf({ PORT: 'abc', STEP_CONCURRENCY: '0' })!;
    expect(message).toContain('PORT');
    expect(message).toContain('STEP_CONCURRENCY');
  });

  it('refuses to start without an API key or with a short one, but the CLI tools need none', () => {
    expect(() => loadConfig({})).toThrow(/API_KEY/);
    expect(() => loadConfig({ API_KEY: 'short' })).toThrow(/shorter than 16/);
    expect(() => loadConfig({ API_KEYS: 'no-equals-sign' })).toThrow(/API_KEYS/);
    expect(loadConfig({}, { requireApiKey: false }).apiKeys.size).toBe(0);
  });
});
