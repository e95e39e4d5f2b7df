import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { ScaffoldJobs } from '#libs/kube';
import { RunCommands } from '#libs/run-decider';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { LOGGER } from '../logging/logging.module';
import { PeriodicTask } from '../common/periodic-task';
import { RunReadModel } from '../projection/run-read-model';

export const LOG_LINES_IN_REASON = 20;

/**
 * Turns a Job that failed, or vanished, before its run reached a terminal event into StepFailed +
 * ScaffoldFailed, with the Job's condition and the pod's last log lines as the reason. Stateless: every
 * replica may run it; the decider makes a second report of the same failure a no-op.
 */
@Injectable()
export class JobWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly task: PeriodicTask;
  private readonly opts: { missingGraceMs: number };

  constructor(
    private readonly commands: RunCommands,
    private readonly readModel: RunReadModel,
    private readonly jobs: ScaffoldJobs,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.opts = { missingGraceMs: config.jobMissingGraceMs };
    this.task = new PeriodicTask(
      config.jobWatchIntervalMs,
      () => this.checkOnce(),
      (e) => this.logger.warn({ err: String(e) }, 'Job watch failed'),
    );
  }

  onApplicationBootstrap() {
    this.task.start();
  }

  onModuleDestroy() {
    return this.task.stop();
  }

  async checkOnce(now = new Date()): Promise<string[]> {
    const active = await this.readModel.active();
    const outcomes = await this.jobs.outcomes(active.map((run) => run.id));
    const failed: string[] = [];
    for (const run of active) {
      let outcome = outcomes.get(run.id)!;
      // The list finds the service's Jobs by their labels; a Job whose labels someone changed is still the run's
      // Job by name: read it before the run is failed as having lost it (rare, so one read each is cheap).
      if (outcome.state === 'missing') outcome = await this.jobs.outcome(run.id);
      let reason: string | null = null;
      if (outcome.state === 'failed') reason = outcome.reason;
      else if (outcome.state === 'missing' && now.getTime() - run.created_at.getTime() > this.opts.missingGraceMs)
        reason = `Job scaffold-${run.id} disappeared before the run finished`;
      else if (outcome.state === 'succeeded') reason = 'Job completed but the run has no terminal event';
      if (!reason) continue;
      const tail = outcome.state === 'missing' ? '' : await this.jobs.logs(run.id, LOG_LINES_IN_REASON).catch(() => '');
      const full = tail ? `${reason}; last log lines:\n${tail.trim()}` : reason;
      const { appended } = await this.commands.handle(run.id, {
        type: 'FailCurrentStep',
        reason: full,
        retryable: false,
      });
      if (appended.length > 0) {
        failed.push(run.id);
        this.logger.warn({ run_id: run.id, reason }, 'run failed by its Job');
      }
    }
    return failed;
  }
}
