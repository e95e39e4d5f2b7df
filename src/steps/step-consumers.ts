import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { ForgeResolver } from '#libs/delivery/forge-port';
import { FORGE_RESOLVER } from '../delivery/delivery.module';
import type { TreeGenerator } from '#libs/generator';
import { EventStore, RunInputs, RunLogStore } from '#libs/event-store';
import type { GitWorkspaces } from '#libs/git';
import { RunCommands } from '#libs/run-decider';
import {
  handlersFor,
  RunInputStepCrashRecords,
  StepCrashGuard,
  stepConsumer,
  StepProcessor,
  SuppliedCredentialsSource,
  TargetClusters,
} from '#libs/steps';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { ConsumerSpec, ConsumesEvents, EventConsumer } from '../event-store/event-consumer';
import { EVENT_STORE, RUN_INPUTS, RUN_LOGS } from '../event-store/event-store.module';
import { GIT_WORKSPACES } from '../git/git.module';
import { TREE_GENERATOR } from '../generation/generation.module';
import { LOGGER } from '../logging/logging.module';
import { Metrics } from '../metrics/metrics';

export const STEP_SCOPE = Symbol('STEP_SCOPE');

/** Where the steps may reach the target cluster and credentials Secrets (where the management cluster is reachable). */
export interface StepScope {
  targets?: TargetClusters;
  credentials?: SuppliedCredentialsSource;
}

/**
 * One consumer per step, on its durable. On shutdown in-flight steps get SHUTDOWN_GRACE_SECONDS to
 * finish before they are handed back to the stream (steps are idempotent, so whoever takes one over
 * does not push twice). A step that was at work when the process died MAX_STEP_CRASHES times is parked.
 */
@Injectable()
@ConsumesEvents()
export class StepConsumers implements EventConsumer {
  private readonly specs: ConsumerSpec[];

  constructor(
    @Inject(EVENT_STORE) events: EventStore,
    @Inject(RUN_INPUTS) inputs: RunInputs,
    @Inject(RUN_LOGS) logs: RunLogStore,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    @Inject(STEP_SCOPE) scope: StepScope,
    @Inject(TREE_GENERATOR) generator: TreeGenerator,
    @Inject(GIT_WORKSPACES) workspaces: GitWorkspaces,
    @Inject(FORGE_RESOLVER) forges: ForgeResolver | null,
    metrics: Metrics,
  ) {
    const onAttempt = (step: string, outcome: 'succeeded' | 'failed', seconds: number) =>
      metrics.stepDuration.observe({ step, outcome }, seconds);
    const onHandoff = (step: string, seconds: number) => metrics.stepHandoff.observe({ step }, seconds);
    const crashes = new StepCrashGuard(new RunInputStepCrashRecords(inputs), config.maxStepCrashes);
    const deps = {
      commands: new RunCommands(events),
      inputs,
      logs,
      settings: config.steps,
      logger,
      targets: scope.targets,
      credentials: scope.credentials,
      forges: forges ?? undefined,
      generator,
      workspaces,
      onAttempt,
      onHandoff,
      crashes,
      onCrashFound: (step: string) => metrics.stepCrashes.inc({ step }),
      onParked: (step: string) => metrics.stepsParked.inc({ step }),
    };
    this.specs = handlersFor().map((handler) => {
      const processor = new StepProcessor(handler, deps);
      return {
        options: stepConsumer(handler.step, config.steps),
        handle: processor.handle,
        shutdownGraceMs: config.shutdownGraceMs,
        handedBack: () => processor.handedBack(),
      };
    });
  }

  consumers(): ConsumerSpec[] {
    return this.specs;
  }
}
