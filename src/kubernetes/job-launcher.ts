import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ACK, ALL_RUNS, Delivery, Disposition, EventStore, nakAfter } from '#libs/event-store';
import { KubeJob, ScaffoldJobs } from '#libs/kube';
import { KubeError } from '#libs/kube/errors';
import { fold, isTerminal, RunCommands } from '#libs/run-decider';
import { LAUNCHER } from '../event-store/consumer-names';
import { ConsumerSpec, ConsumesEvents, EventConsumer } from '../event-store/event-consumer';
import { EVENT_STORE } from '../event-store/event-store.module';
import { LOGGER } from '../logging/logging.module';
import { mintRunnerToken, RunnerCredentials } from '../runner-api/runner-credentials';

/** A runner credential outlives its Job's active deadline by this much (a report sent just before it). */
const CREDENTIAL_MARGIN_SECONDS = 300;

/**
 * EXECUTOR=kubernetes: ScaffoldRequested -> Job scaffold-<id> in the provisioning namespace. Creating
 * is idempotent (an existing Job of the run is adopted), so a redelivery or a second replica is harmless.
 * A launch that cannot succeed (403, a foreign Job of that name) fails the run with the reason.
 */
@Injectable()
@ConsumesEvents()
export class JobLauncher implements EventConsumer {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly commands: RunCommands,
    private readonly jobs: ScaffoldJobs,
    private readonly credentials: RunnerCredentials,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  consumers(): ConsumerSpec[] {
    return [
      {
        options: { durable: LAUNCHER, filterSubject: ALL_RUNS, ackWaitMs: 30_000, concurrency: 16 },
        handle: (batch) => this.launch(batch),
      },
    ];
  }

  /**
   * The Job's credential: its Secret (created, or the one a first launch created) and the hash the
   * runner API checks. Valid until the Job's deadline has passed (and, checked per request, while the run lasts).
   */
  private async issueRunnerCredential(runId: string, job: KubeJob): Promise<void> {
    const created = Date.parse(String(job.metadata?.creationTimestamp ?? '')) || Date.now();
    const expires = new Date(created + (this.jobs.settings.activeDeadlineSeconds + CREDENTIAL_MARGIN_SECONDS) * 1000);
    const minted = mintRunnerToken();
    // Recorded before its Secret exists, so the pod (which cannot start without the Secret) never meets an unknown token.
    await this.credentials.record(runId, minted, expires);
    const token = await this.jobs.ensureRunnerSecret(runId, job, minted);
    if (token !== minted) await this.credentials.record(runId, token, expires);
  }

  /**
   * A redelivered ScaffoldRequested (a lost ack, a retry after a failed credential write, another replica) must not
   * bring back a Job that was created and then deleted: the Job watcher fails that run, and a new Job would hide why.
   */
  private async launchedAndGone(runId: string): Promise<boolean> {
    return (await this.credentials.issued(runId)) && (await this.jobs.outcome(runId)).state === 'missing';
  }

  async launch([{ event }]: Delivery[]): Promise<Disposition> {
    if (event.type !== 'ScaffoldRequested') return ACK;
    const runId = event.run_id;
    try {
      if (isTerminal(fold((await this.events.readRun(runId)).events))) return ACK;
      if (await this.launchedAndGone(runId)) {
        this.logger.warn(
          { run_id: runId, event_id: event.id },
          'Job was launched and has disappeared: not launched again',
        );
        return ACK;
      }
      const { job, adopted } = await this.jobs.ensureJob(runId);
      await this.issueRunnerCredential(runId, job);
      this.logger.info(
        { run_id: runId, event_id: event.id, adopted },
        adopted ? 'adopted existing Job' : 'created Job',
      );
      return ACK;
    } catch (e) {
      const retryable = !(e instanceof KubeError) || e.retryable;
      this.logger.warn({ run_id: runId, err: (e as Error).message, retryable }, 'Job launch failed');
      if (retryable) return nakAfter(5000);
      await this.commands.handle(
        runId,
        { type: 'FailCurrentStep', reason: (e as Error).message, retryable: false },
        { causationId: event.id },
      );
      return ACK;
    }
  }
}
