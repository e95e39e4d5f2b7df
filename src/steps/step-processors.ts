import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import type { TreeGenerator } from '../../libs/generator/src';
import { deleteConsumer, EventStore, JetStreamEventStore, JetStreamProcessor, RunInputs, RunLogStore } from '../../libs/event-store/src';
import { LOCAL_STEP_HANDLERS, stepConsumer, StepProcessor, SuppliedCredentialsSource, TargetClusters } from '../../libs/steps/src';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { OwnedConsumers } from '../event-log/event-log-health';
import { EVENT_STORE, RUN_INPUTS, RUN_LOGS } from '../event-log/event-log.module';
import { TREE_GENERATOR } from '../generation/generation.module';
import { LOGGER } from '../logging/logging.module';
import { Metrics } from '../metrics/metrics';

export const STEP_SCOPE = Symbol('STEP_SCOPE');

/** Which runs this process works on (all, or one run in its Job) and where it may reach the target cluster. */
export interface StepScope {
  onlyRunId?: string;
  targets?: TargetClusters;
  credentials?: SuppliedCredentialsSource;
}

/**
 * One processor per step on its durable consumer. Started when the application is up; on shutdown
 * they stop pulling and in-flight steps get SHUTDOWN_GRACE_SECONDS to finish before they are handed
 * back to the stream (steps are idempotent, so whoever takes one over does not push twice).
 */
@Injectable()
export class StepProcessors implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly processors: JetStreamProcessor[];
  private stopping?: Promise<void>;

  constructor(
    private readonly store: JetStreamEventStore,
    @Inject(EVENT_STORE) events: EventStore,
    @Inject(RUN_INPUTS) inputs: RunInputs,
    @Inject(RUN_LOGS) logs: RunLogStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(STEP_SCOPE) scope: StepScope,
    @Inject(TREE_GENERATOR) generator: TreeGenerator,
    metrics: Metrics,
    owned: OwnedConsumers,
  ) {
    const onAttempt = (step: string, outcome: 'succeeded' | 'failed', seconds: number) => metrics.stepDuration.observe({ step, outcome }, seconds);
    const onHandoff = (step: string, seconds: number) => metrics.stepHandoff.observe({ step }, seconds);
    const deps = { store: events, inputs, logs, settings: config.steps, logger, targets: scope.targets, credentials: scope.credentials, generator, onAttempt, onHandoff };
    this.processors = LOCAL_STEP_HANDLERS.map((handler) => {
      const step = new StepProcessor(handler, deps);
      return new JetStreamProcessor(store, stepConsumer(handler.step, config.steps, scope.onlyRunId), step.handle, logger);
    });
    for (const p of this.processors) owned.add(p.durable);
  }

  async onApplicationBootstrap() {
    for (const p of this.processors) await p.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return (this.stopping ??= this.stop());
  }

  private async stop() {
    const results = await Promise.all(this.processors.map((p) => p.stop(this.config.shutdownGraceMs)));
    const handedBack = results.reduce((n, r) => n + r.handedBack, 0);
    this.logger.info({ handed_back: handedBack, grace_ms: this.config.shutdownGraceMs }, 'step processors stopped');
  }

  /** Stops and deletes the consumers: for a runner whose run is over (its per-run consumers have nothing left to deliver). */
  async retire(): Promise<void> {
    await this.beforeApplicationShutdown();
    for (const p of this.processors) await deleteConsumer(this.store, p.durable);
  }
}
