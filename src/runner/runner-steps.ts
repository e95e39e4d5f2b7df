import type { ForgeResolver } from '#libs/delivery/forge-port';
import { FORGE_RESOLVER } from '../delivery/delivery.module';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import type { TreeGenerator } from '#libs/generator';
import type { GitWorkspaces } from '#libs/git';
import { handlersFor, StepProcessor, SuppliedCredentialsSource, TargetClusters } from '#libs/steps';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { TREE_GENERATOR } from '../generation/generation.module';
import { GIT_WORKSPACES } from '../git/git.module';
import { SUPPLIED_CREDENTIALS, TARGET_CLUSTERS } from '../kubernetes/credentials-source';
import { LOGGER } from '../logging/logging.module';
import { DriveOutcome, driveRun } from './run-driver';
import { RUN_ENDED } from '../runner-api/contract';
import { RunnerApiClient, RunnerApiRefusal } from './runner-api-client';

/**
 * A runner Job's steps: the service's step handlers and processors, reading and reporting through the
 * runner API (no NATS), reaching git, the target cluster and credentials Secrets from the Job.
 */
@Injectable()
export class RunnerSteps {
  private readonly processors: StepProcessor[];

  constructor(
    private readonly api: RunnerApiClient,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
    @Inject(TREE_GENERATOR) generator: TreeGenerator,
    @Inject(GIT_WORKSPACES) workspaces: GitWorkspaces,
    @Optional() @Inject(TARGET_CLUSTERS) targets?: TargetClusters,
    @Optional() @Inject(SUPPLIED_CREDENTIALS) credentials?: SuppliedCredentialsSource,
    @Optional() @Inject(FORGE_RESOLVER) forges?: ForgeResolver | null,
  ) {
    const deps = {
      commands: api.commands,
      inputs: api.inputs,
      logs: api.logs,
      settings: config.steps,
      logger,
      targets,
      credentials,
      forges: forges ?? undefined,
      generator,
      workspaces,
    };
    this.processors = handlersFor().map((handler) => new StepProcessor(handler, deps));
  }

  /** Works on the run until it has ended (or `signal` stops it between steps). */
  drive(signal?: AbortSignal): Promise<DriveOutcome> {
    const events = () =>
      this.api.events().catch((e) => {
        if (e instanceof RunnerApiRefusal && e.code === RUN_ENDED) return null;
        throw e;
      });
    return driveRun({ events, processors: this.processors, signal });
  }
}
