import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { JetStreamEventStore } from '#libs/event-store';
import { RunCommands } from '#libs/run-decider';
import { durableNameFor } from '#libs/steps';
import { PeriodicTask } from '../common/periodic-task';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { LOGGER } from '../logging/logging.module';
import { Metrics } from '../metrics/metrics';
import { RunReadModel } from '../projection/run-read-model';

/** Runs looked at per round, the longest quiet first: a backlog is worked off over a few rounds. */
const RUNS_PER_ROUND = 100;
/** How often the read-model is asked, at most: a stall is found within a quarter of its threshold. */
const LONGEST_INTERVAL_MS = 30_000;

/** Where a step's durable consumer has delivered up to (its stream sequence). */
export interface ConsumerPositions {
  deliveredUpTo(durable: string): Promise<number>;
}

/**
 * Re-drives runs no step worker holds. A step's trigger is delivered at least once in principle, but a JetStream
 * consumer can lose a delivery when its leader changes mid-delivery (nats-server before 2.10.26 and 2.11: the new
 * leader never learns of the delivery, then moves past it on a later ack), and the run would wait for ever.
 *
 * A run is re-driven (StepRedriveRequested, which triggers its step again) when both hold: its step's consumer has
 * delivered past the run's last event (a run still queued behind others is waiting its turn, not lost; re-driving
 * it would send it to the back), and it has had no event for `stalledRunMs`, longer than any step at work stays
 * silent. The read-model and the consumer only nominate; the decider decides on the run's own history, so every
 * replica may run the check (the first to append makes the run recent for the others).
 */
@Injectable()
export class StalledRunCheck implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly task?: PeriodicTask;
  private readonly positions: ConsumerPositions;

  constructor(
    private readonly commands: RunCommands,
    private readonly readModel: RunReadModel,
    store: JetStreamEventStore,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.positions = store.consumers;
    if (config.stalledRunMs <= 0) return;
    this.task = new PeriodicTask(
      Math.max(1000, Math.min(LONGEST_INTERVAL_MS, config.stalledRunMs / 4)),
      () => this.checkOnce(),
      (e) => this.logger.warn({ err: String(e) }, 'the stalled-run check failed; trying again'),
    );
  }

  onApplicationBootstrap() {
    this.task?.start();
  }

  async onModuleDestroy() {
    await this.task?.stop();
  }

  /** One round: the ids of the runs it re-drove. */
  async checkOnce(now = new Date()): Promise<string[]> {
    const quietMs = this.config.stalledRunMs;
    const candidates = await this.readModel.stuck(new Date(now.getTime() - quietMs), RUNS_PER_ROUND);
    const delivered = new Map<string, Promise<number>>();
    const deliveredPast = (step: string, seq: number) => {
      if (!delivered.has(step)) delivered.set(step, this.positions.deliveredUpTo(durableNameFor(step)));
      return delivered.get(step)!.then((upTo) => upTo >= seq);
    };
    const redriven: string[] = [];
    for (const run of candidates) {
      if (!run.step || !(await deliveredPast(run.step, Number(run.last_seq)))) continue;
      const { appended } = await this.commands.handle(run.id, {
        type: 'RedriveStalled',
        quietMs,
        now: now.toISOString(),
      });
      const redrive = appended.find((e) => e.type === 'StepRedriveRequested');
      if (redrive?.type !== 'StepRedriveRequested') continue;
      redriven.push(run.id);
      this.metrics.stalledRunsRedriven.inc({ step: redrive.data.step });
      this.logger.warn(
        { run_id: run.id, step: redrive.data.step, quiet_seconds: Math.round(quietMs / 1000) },
        'no worker holds this run (its step consumer delivered past it and it has been quiet too long): step re-driven',
      );
    }
    return redriven;
  }
}
