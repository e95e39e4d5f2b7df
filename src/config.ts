import { resolve } from 'node:path';
import type { RegistryCredentials } from '../libs/generator/src';
import type { StepSettings } from '../libs/steps/src';

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

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const keys = apiKeys(env);
  if (keys.size === 0) throw new Error('API_KEY (or API_KEYS) is required: the service refuses to start without one');
  for (const [name, key] of keys) if (key.length < 16) throw new Error(`API key "${name}" is shorter than 16 characters`);
  const executor = (env.EXECUTOR ?? 'local') as AppConfig['executor'];
  if (executor !== 'local') throw new Error(`EXECUTOR=${executor} is not available in this build (only local)`);
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
    },
  };
}
