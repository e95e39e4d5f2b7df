import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import pino, { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { JetStreamEventStore } from '../libs/event-store/src';
import { LOCAL_STEP_HANDLERS, StepWorker } from '../libs/steps/src';
import { NatsApi } from './api/nats-api';
import { ScaffoldApi } from './api/scaffold-api';
import type { AppConfig } from './config';
import { makeDataSource } from './projection/data-source';
import { Projector } from './projection/projector';
import { Metrics } from './metrics';

/** Field names whose values never reach a log line. */
export const LOG_REDACT_PATHS = ['*.password', '*.token', '*.apiKey', '*.api_key', '*.sealing_cert_pem', 'headers["x-api-key"]', '*.headers["x-api-key"]', '*.authorization', 'REGISTRY_PASSWORD'];

export function makeLogger(): Logger {
  return pino({ level: process.env.LOG_LEVEL ?? 'info', redact: { paths: LOG_REDACT_PATHS, censor: '***' } });
}

/**
 * Everything the process owns: the NATS connection, the event store, PostgreSQL, the step workers,
 * the projector and the NATS API. Nothing here is state two replicas would fight over: runs live in
 * the stream, the read-model in PostgreSQL, and work is shared through durable consumers and queue groups.
 */
export class Runtime {
  private workers: StepWorker[] = [];
  private projector?: Projector;
  private natsApi?: NatsApi;
  private kubernetes?: { stop(): Promise<void> };

  private constructor(
    readonly config: AppConfig,
    readonly nc: NatsConnection,
    readonly store: JetStreamEventStore,
    readonly ds: DataSource,
    readonly api: ScaffoldApi,
    readonly logger: Logger,
    readonly metrics: Metrics,
  ) {}

  static async start(config: AppConfig, logger: Logger = makeLogger()): Promise<Runtime> {
    // git must fail on missing credentials, never wait at a prompt.
    process.env.GIT_TERMINAL_PROMPT = '0';
    const nc = await connect({ servers: config.natsUrl, name: 'gitops-scaffolder', maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    const store = await JetStreamEventStore.open(nc, undefined, config.streamReplicas);
    const ds = makeDataSource(config.databaseUrl);
    await ds.initialize();
    if (config.migrationsRun) await ds.runMigrations({ transaction: 'each' });
    // Loaded only for EXECUTOR=kubernetes: the local executor never touches the Kubernetes client.
    const executor = config.executor === 'kubernetes' ? new (require('./run/kubernetes-executor').KubernetesExecutor)(store, ds, config, logger) : undefined;
    const jobLogs = executor ? (runId: string) => executor.jobs.logs(runId) : undefined;
    const metrics = new Metrics(store);
    const rt = new Runtime(config, nc, store, ds, new ScaffoldApi(store, ds, config, jobLogs), logger, metrics);
    rt.projector = new Projector(store, ds, (e) => logger.warn({ err: String(e) }, 'projection paused'), (e) => metrics.projected(e), Math.min(config.steps.ackWaitMs, 10_000));
    await rt.projector.start();
    if (executor) {
      await executor.start();
      rt.kubernetes = executor;
    }
    for (const handler of config.runStepWorkers && !executor ? LOCAL_STEP_HANDLERS : []) {
      const worker = new StepWorker(store, handler, config.steps, logger, undefined, undefined, (step, outcome, seconds) => metrics.stepDuration.observe({ step, outcome }, seconds));
      await worker.start();
      rt.workers.push(worker);
    }
    rt.natsApi = new NatsApi(nc, rt.api, config.apiKeys, logger, metrics);
    rt.natsApi.start();
    logger.info({ nats: nc.info?.version, executor: config.executor }, 'gitops-scaffolder running');
    return rt;
  }

  async health(): Promise<{ ok: boolean; nats: string; postgres: string }> {
    const nats = this.nc.isClosed() ? 'down' : await this.store.jsm.getAccountInfo().then(() => 'up', () => 'down');
    const postgres = await this.ds.query('SELECT 1').then(() => 'up', () => 'down');
    return { ok: nats === 'up' && postgres === 'up', nats, postgres };
  }

  async stop() {
    this.natsApi?.stop();
    await Promise.all(this.workers.map((w) => w.stop()));
    await this.kubernetes?.stop();
    await this.projector?.stop();
    await this.nc.drain().catch(() => undefined);
    await this.ds.destroy().catch(() => undefined);
  }
}
