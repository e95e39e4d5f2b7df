import { BOX_SETTINGS } from '#libs/git/build-box';
import { DEFAULT_REPO_LIMITS } from '#libs/runtime';
import { DEFAULT_NATS_URL } from './nats-settings';
import { DEFAULT_REPLY_PREFIXES } from './reply-subjects';

/**
 * Every environment variable the service, scaffold-runner and scaffolderctl read, with its type,
 * range and default: one schema, checked at start, so a bad value stops the process with its name
 * (STEP_CONCURRENCY=0, PORT=abc) instead of running with a fallback.
 */
const text = (fallback?: string) => ({ type: 'string', ...(fallback !== undefined ? { default: fallback } : {}) });
const integer = (fallback: number, minimum: number, maximum: number) => ({
  type: 'integer',
  minimum,
  maximum,
  default: fallback,
});
const seconds = (fallback: number, maximum = 7 * 24 * 3600) => ({
  type: 'number',
  exclusiveMinimum: 0,
  maximum,
  default: fallback,
});
const flag = (fallback: boolean) => ({ type: 'boolean', default: fallback });

/** One GIT_ALLOWED_HOSTS entry: `host`, `*.domain` or `[IPv6]`, optionally `:port`. */
const ALLOWED_HOST = '((\\*\\.)?[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:\\d+)?';

export const ENV_SCHEMA = {
  type: 'object',
  properties: {
    PORT: integer(8080, 1, 65535),
    HOST: text('0.0.0.0'),
    LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    API_KEY: text(),
    API_KEYS: text(),
    API_KEYS_FILE: text(),
    SECRET_NAMESPACES: {
      type: 'string',
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\s*,\\s*[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    },
    NATS_URL: { type: 'string', minLength: 1, default: DEFAULT_NATS_URL },
    NATS_CREDS: text(),
    NATS_NKEY_SEED_FILE: text(),
    NATS_USER: text(),
    NATS_PASSWORD: text(),
    NATS_PASSWORD_FILE: text(),
    NATS_TOKEN: text(),
    NATS_TOKEN_FILE: text(),
    NATS_TLS_CA: text(),
    NATS_TLS_CERT: text(),
    NATS_TLS_KEY: text(),
    NATS_INBOX_PREFIX: text(),
    NATS_REPLY_PREFIXES: text(DEFAULT_REPLY_PREFIXES.join(',')),
    DATABASE_SSL_CA: text(),
    DATABASE_URL: { type: 'string', minLength: 1, default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    EXECUTOR: { enum: ['local', 'kubernetes'], default: 'local' },
    PLATFORM_REPO_URL: text(),
    DEFAULT_BRANCH: { type: 'string', minLength: 1, default: 'main' },
    GIT_ALLOWED_SCHEMES: {
      type: 'string',
      pattern: '^[a-z][a-z0-9+.-]*(,\\s*[a-z][a-z0-9+.-]*)*$',
      default: 'https,ssh',
    },
    GIT_ALLOWED_HOSTS: { type: 'string', pattern: `^${ALLOWED_HOST}(\\s*,\\s*${ALLOWED_HOST})*$` },
    MIGRATIONS_RUN: flag(true),
    MAX_ACTIVE_RUNS_PER_KEY: integer(20, 1, 100_000),
    MAX_CREATES_PER_MINUTE_PER_KEY: integer(30, 1, 100_000),
    MAX_PREVIEWS_PER_MINUTE_PER_KEY: integer(10, 1, 100_000),
    MAX_PREVIEWS_IN_FLIGHT_PER_KEY: integer(2, 1, 1000),
    // A tenant's repository is code: what one may make the service check out and read (libs/runtime/src/repo-limits.ts).
    MAX_REPO_FILE_BYTES: integer(DEFAULT_REPO_LIMITS.maxFileBytes, 1024, 1024 ** 3),
    MAX_REPO_BYTES: integer(DEFAULT_REPO_LIMITS.maxRepoBytes, 1024 * 1024, 64 * 1024 ** 3),
    MAX_REPO_FILES: integer(DEFAULT_REPO_LIMITS.maxRepoFiles, 10, 10_000_000),
    PREVIEW_TIMEOUT_SECONDS: seconds(120, 3600),
    MAX_SSE_STREAMS_PER_KEY: integer(20, 1, 100_000),
    MAX_SSE_STREAMS: integer(200, 1, 1_000_000),
    SSE_MAX_SECONDS: integer(3600, 1, 7 * 24 * 3600),
    STREAM_REPLICAS: integer(1, 1, 5),
    RUN_STEP_WORKERS: flag(true),
    SERVICE_ROLE: { enum: ['all', 'api', 'worker'], default: 'all' },
    SHUTDOWN_GRACE_SECONDS: { type: 'number', minimum: 0, maximum: 3600, default: 25 },
    MAX_STEP_CRASHES: integer(3, 1, 100),
    /** 0: off; unset: the longest a step at work may go without an event (see config.ts). */
    STALLED_RUN_SECONDS: { type: 'number', minimum: 0, maximum: 7 * 24 * 3600 },
    WORK_DIR: text('.work'),
    TEMPLATE_DIR: text(),
    REFERENCE_ENV: { type: 'string', minLength: 1, default: 'development' },
    REFERENCE_ENVS: text(''),
    KUBECTL: text('kubectl'),
    // Read by the generator's threads from the environment (libs/git/src/build-box.ts); checked here so a typo stops the start.
    BUILD_SANDBOX: { enum: [...BOX_SETTINGS], default: 'auto' },
    GIT_CREDENTIALS_DIR: text(),
    GIT_CREDENTIALS_HOSTS: text(''),
    GIT_CA_FILE: text(),
    GIT_AUTHOR_NAME: text('GitOps Scaffolder'),
    GIT_AUTHOR_EMAIL: text('gitops-scaffolder@localhost'),
    REGISTRY_SERVER: text(),
    REGISTRY_USERNAME: text(),
    REGISTRY_PASSWORD: text(),
    STEP_TIMEOUT_SECONDS: seconds(600),
    ACK_WAIT_SECONDS: seconds(30, 3600),
    STEP_CONCURRENCY: integer(4, 1, 64),
    GENERATOR_THREADS: integer(0, 0, 64),
    GENERATOR_PASSES_PER_THREAD: integer(2, 1, 8),
    CPU_LIMIT: integer(0, 0, 4096),
    GENERATOR_NICE: integer(10, 0, 19),
    PUSH_ATTEMPTS: integer(100, 1, 10_000),
    PUSH_DEADLINE_SECONDS: seconds(300, 24 * 3600),
    SEALED_SECRETS_NAMESPACE: text('kube-system'),
    SEALED_SECRETS_NAME: text(),
    SEALED_SECRETS_DEADLINE_SECONDS: seconds(1200),
    SEALED_SECRETS_POLL_INITIAL_MS: integer(2000, 1, 600_000),
    SEALED_SECRETS_POLL_MAX_MS: integer(30_000, 1, 3_600_000),
    // Merge-request delivery (docs/delivery.md): the forges by repository prefix, and how long a run waits for a merge.
    FORGE_DEFAULTS: text(),
    FORGE_CREDENTIALS_DIR: text(),
    FORGE_CA_FILE: text(),
    FORGE_TIMEOUT_SECONDS: text(),
    MERGE_DEADLINE_SECONDS: seconds(3 * 24 * 3600, 30 * 24 * 3600),
    MERGE_POLL_MAX_MS: integer(30_000, 1, 3_600_000),
    CONSOLE_URL: { type: 'string', pattern: '^https?://[^\\s/?#@]+(/[^\\s?#]*)?$' },
    JOB_NAMESPACE: text('kubeopera-provisioning'),
    RUNNER_IMAGE: text(),
    JOB_SERVICE_ACCOUNT: text('gitops-scaffolder-runner'),
    JOB_CONFIGMAP: text('gitops-scaffolder-runner'),
    JOB_ENV_SECRETS: text('gitops-scaffolder-runner'),
    JOB_GIT_SECRET: text(),
    RUNNER_SERVICE_URL: { type: 'string', pattern: '^https?://[^\\s/?#@]+(/[^\\s?#]*)?$' },
    JOB_IMAGE_PULL_SECRETS: text(''),
    JOB_BACKOFF_LIMIT: integer(2, 0, 100),
    JOB_ACTIVE_DEADLINE_SECONDS: integer(3600, 1, 7 * 24 * 3600),
    JOB_TTL_SECONDS: integer(86_400, 0, 30 * 24 * 3600),
    JOB_WATCH_INTERVAL_SECONDS: seconds(10, 3600),
    JOB_MISSING_GRACE_SECONDS: { type: 'number', minimum: 0, maximum: 24 * 3600, default: 60 },
    KUBECONFIG: text(),
  },
} as const;
