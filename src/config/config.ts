import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import Ajv from 'ajv';
import { keptPlans } from '#libs/events/run-plans';
import type { RunPlan } from '#libs/events/run-plan';
import { ForgeSettings, ForgeSettingsError, forgeSettingsFromEnv } from '#libs/delivery/forge-settings';
import type { RegistryCredentials } from '#libs/generator';
import type { GitAccessSettings } from '#libs/git';
import { JobSettings, RUNNER_IMAGE } from '#libs/kube/job-spec';
import type { StepSettings } from '#libs/steps';
import { ApiKey, Role, ROLES, sha256Of } from './api-key';
import { readApiKeysFile } from './api-keys-file';
import { ENV_SCHEMA } from './env.schema';
import { NatsEnv, NatsSettings, natsSettings } from './nats-settings';
import { validReplyPrefix } from './reply-subjects';
import { readableFile, SettingError } from './setting-files';

/** What a replica of the service runs (SERVICE_ROLE). */
export type ServiceRole = 'all' | 'api' | 'worker';

/** Whether a replica of this role answers the controllers' API (REST, NATS, console). */
export const servesApi = (role: ServiceRole) => role !== 'worker';
/** Whether a replica of this role does the runs' work: projects, runs steps or Jobs, takes runner reports. */
export const doesWork = (role: ServiceRole) => role !== 'api';

export interface AppConfig {
  port: number;
  host: string;
  logLevel: string;
  apiKeys: Map<string, ApiKey>;
  /** SECRET_NAMESPACES: where keys without secret_namespaces may name a credentials_secret or kubeconfig_secret (empty: nowhere). */
  secretNamespaces: string[];
  /** Servers, authentication and TLS for NATS (NATS_URL, NATS_CREDS, NATS_TLS_*, ...). */
  nats: NatsSettings;
  /** NATS_REPLY_PREFIXES: the callers' inbox prefixes; the NATS API answers no other reply subject. */
  natsReplyPrefixes: string[];
  /** Per-key limits (429 with Retry-After). */
  quotas: {
    maxActiveRunsPerKey: number;
    maxCreatesPerMinutePerKey: number;
    maxPreviewsPerMinutePerKey: number;
    maxPreviewsInFlightPerKey: number;
    maxSseStreamsPerKey: number;
    maxSseStreams: number;
    sseMaxSeconds: number;
  };
  /** PREVIEW_TIMEOUT_SECONDS: a preview still running then is stopped (its git and kubectl killed) and answered 504. */
  previewTimeoutMs: number;
  databaseUrl: string;
  /** DATABASE_SSL_CA: CA file the PostgreSQL server's certificate (and host name) is verified against. */
  databaseSslCa?: string;
  executor: 'local' | 'kubernetes';
  platformRepoUrl?: string;
  defaultBranch: string;
  allowedSchemes: string[];
  /** How git reaches servers (credentials, CA, protocols, priority): values; the git module prepares them. */
  git: GitAccessSettings;
  /** GIT_ALLOWED_HOSTS: hosts (or *.domain patterns, optionally :port) repository URLs may name; empty: any. */
  allowedHosts: string[];
  /** FORGE_*: which forge serves which repositories, for merge-request delivery (none configured: no such delivery). */
  forges: ForgeSettings;
  migrationsRun: boolean;
  streamReplicas: number;
  /** false: no step processors in this process (it still projects; a replica that only answers the API: role api). */
  runStepWorkers: boolean;
  /**
   * SERVICE_ROLE: what this replica runs. `api`: the controllers' REST and NATS API and the console, nothing else;
   * `worker`: the runs' work (projector, steps or Jobs, the runner API), no public API; `all`: both.
   */
  role: ServiceRole;
  /** How long in-flight steps get to finish on SIGTERM before they are handed back. */
  shutdownGraceMs: number;
  /** How often one step of a run may be at work when the process dies before it is parked (failed, not run again). */
  maxStepCrashes: number;
  /** A run with no event for this long has no worker on it and is re-driven (0: never). */
  stalledRunMs: number;
  /** REFERENCE_ENVS: the environments of the template a request may name besides steps.referenceEnv. */
  referenceEnvs: string[];
  steps: StepSettings;
  /** The worker threads that generate passes: how many at once (by default one core fewer than the process may use, at least one) and how much lower their CPU priority. */
  generation: { threads: number; passesPerThread: number; niceIncrement: number };
  kubernetes: JobSettings;
  jobWatchIntervalMs: number;
  /** Management cluster kubeconfig outside a cluster (in a cluster: the service account). */
  kubeconfigPath?: string;
  /**
   * Whether this process can reach the management cluster (EXECUTOR=kubernetes, KUBECONFIG, or a pod's
   * service account): then it accepts kubeconfig_secret targets and credentials_secret with either executor.
   */
  reachesManagementCluster: boolean;
  jobMissingGraceMs: number;
}

/** A setting that keeps the process from starting; the message names the variable. */
export class ConfigError extends Error {}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false });
const validateEnv = ajv.compile(ENV_SCHEMA);

type Env = Record<string, any>;

/**
 * Every problem of the settings, so a start that fails names them all at once: each check runs, and a
 * ConfigError it throws is kept rather than ending the others.
 */
class SettingProblems {
  readonly found: string[] = [];
  /** Whether a variable failed the schema (its problem then reads `NAME=value must ...`, under a heading). */
  private schemaFailed = false;

  add(problem: string): void {
    this.found.push(problem);
  }

  addSchema(problem: string): void {
    this.schemaFailed = true;
    this.add(problem);
  }

  /** `read`'s value, or undefined when it found a problem (kept). */
  check<T>(read: () => T): T | undefined {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      this.add(e.message);
      return undefined;
    }
  }

  /** One problem alone in its own words; several (or a schema failure) under one heading. */
  throwIfAny(): void {
    if (this.found.length === 0) return;
    throw new ConfigError(
      this.found.length === 1 && !this.schemaFailed ? this.found[0] : `invalid configuration: ${this.found.join('; ')}`,
    );
  }
}

/** The variables of the schema, typed and defaulted; empty strings count as unset. Every failure goes to `problems`. */
function checkedEnv(env: NodeJS.ProcessEnv, problems: SettingProblems): Env {
  const values: Env = {};
  for (const name of Object.keys(ENV_SCHEMA.properties))
    if (env[name] !== undefined && env[name] !== '') values[name] = env[name];
  if (!validateEnv(values)) {
    for (const e of validateEnv.errors!) {
      const name = e.instancePath.slice(1);
      // Only non-secret settings can fail the schema; the guard keeps it so if one ever can.
      const shown = /KEY|PASSWORD|TOKEN|SECRET/.test(name) ? '***' : JSON.stringify(env[name]);
      problems.addSchema(`${name}=${shown} ${e.message}`);
    }
  }
  return values;
}

/**
 * API_KEY (name "default", role admin) and API_KEYS: `name:role:key` entries, or the older `name=key`
 * (role operator), separated by commas. These keys are unscoped.
 */
function envKeys(env: Env, problems: SettingProblems): Map<string, { key: string; role: Role }> {
  const keys = new Map<string, { key: string; role: Role }>();
  if (env.API_KEY) keys.set('default', { key: env.API_KEY, role: 'admin' });
  for (const entry of list(env.API_KEYS ?? '')) {
    const structured = /^([A-Za-z0-9_.-]+):([a-z]+):(.+)$/.exec(entry);
    const legacy = /^([A-Za-z0-9_.-]+)=(.+)$/.exec(entry);
    if (structured) {
      const role = structured[2] as Role;
      if (!(ROLES as readonly string[]).includes(role))
        problems.add(`API_KEYS: key "${structured[1]}" has role "${role}", not one of ${ROLES.join(', ')}`);
      else keys.set(structured[1], { key: structured[3], role });
    } else if (legacy) keys.set(legacy[1], { key: legacy[2], role: 'operator' });
    else problems.add('API_KEYS must be name:role:key (or name=key) entries separated by commas');
  }
  for (const [name, { key }] of keys)
    if (key.length < 16) problems.add(`API key "${name}" is shorter than 16 characters`);
  return keys;
}

/** Every key, as digests: API_KEY and API_KEYS (unscoped), and API_KEYS_FILE (optionally scoped). A name may appear once. */
function apiKeys(env: Env, problems: SettingProblems): Map<string, ApiKey> {
  const keys = new Map<string, ApiKey>(
    [...envKeys(env, problems)].map(([name, { key, role }]) => [name, { sha256: sha256Of(key), role }]),
  );
  let fromFile: Map<string, ApiKey>;
  try {
    fromFile = env.API_KEYS_FILE ? readApiKeysFile(env.API_KEYS_FILE) : new Map();
  } catch (e) {
    throw e instanceof SettingError ? new ConfigError(e.message) : e;
  }
  for (const [name, key] of fromFile) {
    if (keys.has(name)) throw new ConfigError(`API_KEYS_FILE: key name "${name}" is also given by API_KEY or API_KEYS`);
    keys.set(name, key);
  }
  return keys;
}

/** The longest nak backoff a step's redelivery waits (retryDelayMs' cap). */
const LONGEST_RETRY_PAUSE_MS = 30_000;

/**
 * STALLED_RUN_SECONDS, or by default the longest a run being worked on can go without an event, so a re-drive never
 * lands beside a live worker: a step's deadline (a Job's, with the Kubernetes executor), the progress cadence of the
 * run plans' long steps (the sealed-secrets wait: an event a minute, a poll apart, appended within 30 s), then a dead
 * worker's hand-back (twice the ack wait and a retry pause). Past it nobody holds the run: its trigger was lost (a
 * JetStream consumer leader change can lose a delivery).
 */
export function stalledRunMs(env: Env, plans: readonly RunPlan[] = keptPlans()): number {
  if (env.STALLED_RUN_SECONDS !== undefined) return env.STALLED_RUN_SECONDS * 1000;
  const progressSilences = plans.flatMap((plan) =>
    plan.steps.flatMap(({ progress: p }) => (p ? [p.reportEveryMs + Number(env[p.pollSetting]) + p.slackMs] : [])),
  );
  const stepSilence = Math.max(
    env.STEP_TIMEOUT_SECONDS * 1000,
    env.EXECUTOR === 'kubernetes' ? env.JOB_ACTIVE_DEADLINE_SECONDS * 1000 : 0,
    ...progressSilences,
  );
  return stepSilence + 2 * env.ACK_WAIT_SECONDS * 1000 + LONGEST_RETRY_PAUSE_MS;
}

function registry(env: Env): RegistryCredentials | undefined {
  const { REGISTRY_SERVER: server, REGISTRY_USERNAME: username, REGISTRY_PASSWORD: password } = env;
  return server && username && password ? { server, username, password } : undefined;
}

/** Git credentials, CA and protocols: the git module prepares them at start (a folder or file that cannot be used stops the process). */
function gitAccess(env: Env): GitAccessSettings {
  return {
    credentialsDir: env.GIT_CREDENTIALS_DIR,
    credentialsHosts: list(env.GIT_CREDENTIALS_HOSTS ?? ''),
    caFile: env.GIT_CA_FILE,
    lowPriority: env.GENERATOR_NICE > 0,
    helperProcess: true,
    allowedSchemes: list(env.GIT_ALLOWED_SCHEMES),
  };
}

/** NATS servers, credentials and TLS, checked at start: an unreadable file or a conflicting choice stops the process. */
function nats(env: Env): NatsSettings {
  try {
    return natsSettings(env as NatsEnv);
  } catch (e) {
    if (e instanceof SettingError) throw new ConfigError(e.message);
    throw e;
  }
}

/** The callers' inbox prefixes: literal subject tokens (a wildcard or `$` would let a caller name any subject). */
function replyPrefixes(env: Env): string[] {
  const prefixes = list(env.NATS_REPLY_PREFIXES);
  if (prefixes.length === 0) throw new ConfigError('NATS_REPLY_PREFIXES: give at least one inbox prefix');
  const bad = prefixes.find((p) => !validReplyPrefix(p));
  if (bad !== undefined)
    throw new ConfigError(
      `NATS_REPLY_PREFIXES: "${bad}" is not an inbox prefix (subject tokens of letters, digits, _ and - only)`,
    );
  return prefixes;
}

function optionalFile(variable: string, path: string | undefined): string | undefined {
  try {
    return path ? readableFile(variable, path) : undefined;
  } catch (e) {
    throw e instanceof SettingError ? new ConfigError(e.message) : e;
  }
}

const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Where Jobs reach the service (EXECUTOR=kubernetes): required there, since no default fits every cluster. */
function runnerServiceUrl(env: Env): string {
  if (env.RUNNER_SERVICE_URL) return env.RUNNER_SERVICE_URL.replace(/\/+$/, '');
  if (env.EXECUTOR === 'kubernetes')
    throw new ConfigError(
      'RUNNER_SERVICE_URL is required with EXECUTOR=kubernetes: the URL at which Jobs reach this service',
    );
  return '';
}

/** The forges of merge-request delivery; a wrong FORGE_* setting stops the start naming it. */
function forgeSettings(env: Env): ForgeSettings {
  try {
    return forgeSettingsFromEnv(env);
  } catch (e) {
    throw e instanceof ForgeSettingsError ? new ConfigError(e.message) : e;
  }
}

/**
 * Generator threads when GENERATOR_THREADS is not set: one core fewer than the process may use (Node's count,
 * or CPU_LIMIT when lower: Node may count the node's cores in a pod, not its CPU limit), at least one. A pass is
 * not the only work: the main thread answers the API and hands events on, and each pass starts kubectl and git.
 * On 2 cores two threads finish a load sooner but miss the answer-time and memory goals (figures: docs/configuration.md).
 */
export function defaultGeneratorThreads(cores: number): number {
  return Math.max(1, cores - 1);
}

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env, opts: { requireApiKey?: boolean } = {}): AppConfig {
  const problems = new SettingProblems();
  const env = checkedEnv(rawEnv, problems);
  const problemsBeforeKeys = problems.found.length;
  const keys = problems.check(() => apiKeys(env, problems)) ?? new Map<string, ApiKey>();
  // No key at all, unless a key given was refused (its problem says more than "required").
  if (keys.size === 0 && opts.requireApiKey !== false && problems.found.length === problemsBeforeKeys)
    problems.add('API_KEY (or API_KEYS, API_KEYS_FILE) is required: the service refuses to start without one');
  // The settings that can be wrong beyond their schema, each checked whatever the others are.
  const natsSettings = problems.check(() => nats(env));
  const natsReplyPrefixes = problems.check(() => replyPrefixes(env));
  const databaseSslCa = problems.check(() => optionalFile('DATABASE_SSL_CA', env.DATABASE_SSL_CA));
  const serviceUrl = problems.check(() => runnerServiceUrl(env));
  const forges = problems.check(() => forgeSettings(env));
  problems.throwIfAny();
  return {
    port: env.PORT,
    host: env.HOST,
    logLevel: env.LOG_LEVEL,
    apiKeys: keys,
    secretNamespaces: list(env.SECRET_NAMESPACES ?? ''),
    nats: natsSettings!,
    natsReplyPrefixes: natsReplyPrefixes!,
    quotas: {
      maxActiveRunsPerKey: env.MAX_ACTIVE_RUNS_PER_KEY,
      maxCreatesPerMinutePerKey: env.MAX_CREATES_PER_MINUTE_PER_KEY,
      maxPreviewsPerMinutePerKey: env.MAX_PREVIEWS_PER_MINUTE_PER_KEY,
      maxPreviewsInFlightPerKey: env.MAX_PREVIEWS_IN_FLIGHT_PER_KEY,
      maxSseStreamsPerKey: env.MAX_SSE_STREAMS_PER_KEY,
      maxSseStreams: env.MAX_SSE_STREAMS,
      sseMaxSeconds: env.SSE_MAX_SECONDS,
    },
    previewTimeoutMs: env.PREVIEW_TIMEOUT_SECONDS * 1000,
    databaseUrl: env.DATABASE_URL,
    databaseSslCa,
    executor: env.EXECUTOR,
    platformRepoUrl: env.PLATFORM_REPO_URL,
    defaultBranch: env.DEFAULT_BRANCH,
    allowedSchemes: list(env.GIT_ALLOWED_SCHEMES),
    git: gitAccess(env),
    allowedHosts: list(env.GIT_ALLOWED_HOSTS ?? '').map((h) => h.toLowerCase()),
    forges: forges!,
    migrationsRun: env.MIGRATIONS_RUN,
    streamReplicas: env.STREAM_REPLICAS,
    runStepWorkers: env.RUN_STEP_WORKERS,
    role: env.SERVICE_ROLE,
    shutdownGraceMs: env.SHUTDOWN_GRACE_SECONDS * 1000,
    maxStepCrashes: env.MAX_STEP_CRASHES,
    stalledRunMs: stalledRunMs(env),
    generation: {
      threads:
        env.GENERATOR_THREADS || defaultGeneratorThreads(Math.min(availableParallelism(), env.CPU_LIMIT || Infinity)),
      passesPerThread: env.GENERATOR_PASSES_PER_THREAD,
      niceIncrement: env.GENERATOR_NICE,
    },
    referenceEnvs: env.REFERENCE_ENVS.split(',')
      .map((e: string) => e.trim())
      .filter(Boolean),
    steps: {
      workDir: resolve(env.WORK_DIR),
      templateDir: env.TEMPLATE_DIR ? resolve(env.TEMPLATE_DIR) : undefined,
      referenceEnv: env.REFERENCE_ENV,
      kubectl: env.KUBECTL,
      gitIdentity: { name: env.GIT_AUTHOR_NAME, email: env.GIT_AUTHOR_EMAIL },
      registry: registry(env),
      stepTimeoutMs: env.STEP_TIMEOUT_SECONDS * 1000,
      ackWaitMs: env.ACK_WAIT_SECONDS * 1000,
      concurrency: env.STEP_CONCURRENCY,
      pushAttempts: env.PUSH_ATTEMPTS,
      pushDeadlineMs: env.PUSH_DEADLINE_SECONDS * 1000,
      sealedSecrets: {
        namespace: env.SEALED_SECRETS_NAMESPACE,
        names: env.SEALED_SECRETS_NAME ? [env.SEALED_SECRETS_NAME] : ['sealed-secrets-controller', 'sealed-secrets'],
      },
      sealedSecretsDeadlineMs: env.SEALED_SECRETS_DEADLINE_SECONDS * 1000,
      pollInitialMs: env.SEALED_SECRETS_POLL_INITIAL_MS,
      pollMaxMs: env.SEALED_SECRETS_POLL_MAX_MS,
      mergeDeadlineMs: env.MERGE_DEADLINE_SECONDS * 1000,
      mergePollMaxMs: env.MERGE_POLL_MAX_MS,
      consoleUrl: env.CONSOLE_URL,
      repoLimits: {
        maxFileBytes: env.MAX_REPO_FILE_BYTES,
        maxRepoBytes: env.MAX_REPO_BYTES,
        maxRepoFiles: env.MAX_REPO_FILES,
      },
    },
    kubernetes: {
      namespace: env.JOB_NAMESPACE,
      image: env.RUNNER_IMAGE ?? RUNNER_IMAGE,
      serviceAccountName: env.JOB_SERVICE_ACCOUNT,
      configMapName: env.JOB_CONFIGMAP,
      envSecretNames: list(env.JOB_ENV_SECRETS),
      gitSecretName: env.JOB_GIT_SECRET,
      serviceUrl: serviceUrl!,
      imagePullSecretNames: list(env.JOB_IMAGE_PULL_SECRETS),
      backoffLimit: env.JOB_BACKOFF_LIMIT,
      activeDeadlineSeconds: env.JOB_ACTIVE_DEADLINE_SECONDS,
      ttlSecondsAfterFinished: env.JOB_TTL_SECONDS,
    },
    jobWatchIntervalMs: env.JOB_WATCH_INTERVAL_SECONDS * 1000,
    kubeconfigPath: env.KUBECONFIG,
    reachesManagementCluster:
      env.EXECUTOR === 'kubernetes' || Boolean(env.KUBECONFIG) || Boolean(rawEnv.KUBERNETES_SERVICE_HOST),
    jobMissingGraceMs: env.JOB_MISSING_GRACE_SECONDS * 1000,
  };
}
