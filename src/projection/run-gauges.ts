import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { allSteps } from '#libs/events';
import { Metrics } from '../metrics/metrics';
import { ScrapeRead } from '../metrics/scrape-read';
import { RunReadModel } from './run-read-model';

/** The step label of a run that has not reached its first step. */
const NO_STEP = 'none';

/**
 * Active runs by step, read from the read-model at scrape: how many there are and how long the one that
 * has waited longest has gone without an event. A run advancing appends events (a long readiness wait
 * appends StepProgress at least once a minute), so a growing idle time is a run stuck in its step, the
 * same test as `scaffolderctl status --stuck-minutes`. Every replica reports the same figures.
 */
@Injectable()
export class RunGauges {
  private readonly read = new ScrapeRead(() => this.set());
  private readonly active: Gauge;
  private readonly idle: Gauge;

  constructor(
    metrics: Metrics,
    private readonly runs: RunReadModel,
  ) {
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['step'], registers: [metrics.registry], collect: () => this.read.get() });
    this.active = gauge(
      'scaffold_active_runs',
      'Runs not yet ended (queued, running, retrying), by the step they are at',
    );
    this.idle = gauge(
      'scaffold_active_run_idle_seconds',
      'By step: the longest time an active run at that step has gone without a new event (0: none active)',
    );
  }

  private async set(): Promise<void> {
    // Without the read-model there are no figures rather than stale ones (readiness says why).
    const byStep = await this.runs.activeByStep().catch(() => undefined);
    this.active.reset();
    this.idle.reset();
    if (!byStep) return;
    // Every step of the kept run plans, as they are at this scrape (a plan deployed adds its steps).
    for (const step of [...allSteps(), NO_STEP]) {
      this.active.set({ step }, 0);
      this.idle.set({ step }, 0);
    }
    for (const { step, runs, lastEventBefore } of byStep) {
      this.active.set({ step: step ?? NO_STEP }, runs);
      this.idle.set({ step: step ?? NO_STEP }, Math.max(0, (Date.now() - lastEventBefore.getTime()) / 1000));
    }
  }
}
