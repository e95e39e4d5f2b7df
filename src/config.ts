import { resolve } from 'node:path';
import type { RegistryCredentials } from '../libs/generator/src';
import type { StepSettings } from '../libs/steps/src';
import { JobSettings, RUNNER_IMAGE } from '../libs/kube/src/job-spec';

export interface AppConfig {
  port: number;
  apiKeys: Map<string, string>;
  natsUrl: string;
  databaseUrl: string;
  executor: 'local' | 'kubernetes';
  platformRepoUrl?: string;
  defaultBranch: string;
  allowedSchemes: string[];
  migrationsRun: boolean;
  streamReplicas: number;
  /** false for API-only replicas: no step workers in this process. */
  runStepWorkers: boolean;
  steps: StepSettings;
  kubernetes: JobSettings;
  jobWatchIntervalMs: number;
  /** Management cluster kubeconfig outside a cluster (in a cluster: the service account). */
  kubeconfigPath?: string;
  jobMissingGraceMs: number;
}

/** API keys: API_KEY (caller "default") and/or API_KEYS as name=key pairs separated by commas. */
function apiKeys(env: NodeJS.ProcessEnv): Map<string, string> {
  const keys = new Map<string, string>();
  if (env.API_KEY) keys.set('default', env.API_KEY);
  for (const pair of (env.API_KEYS ?? '').split(',').filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at > 0) keys.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  return keys;
}

function registry(env: NodeJS.ProcessEnv): RegistryCredentials | undefined {
  const { REGISTRY_SERVER: server, REGISTRY_USERNAME: username, REGISTRY_PASSWORD: password } = env;
  return server && username && password ? { server, username, password } : undefined;
}

const num = (v: string | undefined, fallback: number) => (v && Number.isFinite(Number(v)) ? Number(v) : fallback);

export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: { requireApiKey?: boolean } = {}): AppConfig {
  const keys = apiKeys(env);
  if (keys.size === 0 && opts.requireApiKey !== false) throw new Error('API_KEY (or API_KEYS) is required: the service refuses to start without one');
  for (const [name, key] of keys) if (key.length < 16) throw new Error(`API key "${name}" is shorter than 16 characters`);
  const executor = (env.EXECUTOR ?? 'local') as AppConfig['executor'];
  if (executor !== 'local' && executor !== 'kubernetes') throw new Error(`EXECUTOR must be local or kubernetes, not ${executor}`);
  return {
    port: num(env.PORT, 8080),
    apiKeys: keys,
    natsUrl: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    executor,
    platformRepoUrl: env.PLATFORM_REPO_URL || undefined,
    defaultBranch: env.DEFAULT_BRANCH ?? 'main',
    allowedSchemes: (env.GIT_ALLOWED_SCHEMES ?? 'https,ssh').split(',').map((s) => s.trim()).filter(Boolean),
    migrationsRun: env.MIGRATIONS_RUN !== 'false',
    streamReplicas: num(env.STREAM_REPLICAS, 1),
    runStepWorkers: env.RUN_STEP_WORKERS !== 'false',
    steps: {
      workDir: resolve(env.WORK_DIR ?? '.work'),
      templateDir: env.TEMPLATE_DIR ? resolve(env.TEMPLATE_DIR) : undefined,
      referenceEnv: env.REFERENCE_ENV ?? 'development',
      gitIdentity: { name: env.GIT_AUTHOR_NAME ?? 'GitOps Scaffolder', email: env.GIT_AUTHOR_EMAIL ?? 'gitops-scaffolder@localhost' },
      registry: registry(env),
      stepTimeoutMs: num(env.STEP_TIMEOUT_SECONDS, 600) * 1000,
      ackWaitMs: num(env.ACK_WAIT_SECONDS, 30) * 1000,
      concurrency: num(env.STEP_CONCURRENCY, 4),
      pushAttempts: num(env.PUSH_ATTEMPTS, 5),
      sealedSecrets: {
        namespace: env.SEALED_SECRETS_NAMESPACE ?? 'kube-system',
        names: env.SEALED_SECRETS_NAME ? [env.SEALED_SECRETS_NAME] : ['sealed-secrets-controller', 'sealed-secrets'],
      },
      sealedSecretsDeadlineMs: num(env.SEALED_SECRETS_DEADLINE_SECONDS, 1200) * 1000,
      pollInitialMs: num(env.SEALED_SECRETS_POLL_INITIAL_MS, 2000),
      pollMaxMs: num(env.SEALED_SECRETS_POLL_MAX_MS, 30_000),
    },
    kubernetes: {
      namespace: env.JOB_NAMESPACE ?? 'kubeopera-provisioning',
      image: env.RUNNER_IMAGE ?? RUNNER_IMAGE,
      serviceAccountName: env.JOB_SERVICE_ACCOUNT ?? 'gitops-scaffolder-runner',
      configMapName: env.JOB_CONFIGMAP ?? 'gitops-scaffolder-runner',
      envSecretNames: (env.JOB_ENV_SECRETS ?? 'gitops-scaffolder-runner').split(',').map((s) => s.trim()).filter(Boolean),
      gitSecretName: env.JOB_GIT_SECRET || undefined,
      backoffLimit: num(env.JOB_BACKOFF_LIMIT, 2),
      activeDeadlineSeconds: num(env.JOB_ACTIVE_DEADLINE_SECONDS, 3600),
      ttlSecondsAfterFinished: num(env.JOB_TTL_SECONDS, 86_400),
    },
    jobWatchIntervalMs: num(env.JOB_WATCH_INTERVAL_SECONDS, 10) * 1000,
    kubeconfigPath: env.KUBECONFIG || undefined,
    jobMissingGraceMs: num(env.JOB_MISSING_GRACE_SECONDS, 60) * 1000,
  };
}
