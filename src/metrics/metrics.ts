import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { JetStreamEventStore } from '#libs/event-store';
import type { StoredEvent } from '#libs/events';
import { PROJECTOR } from '../event-store/consumer-names';
import { VERSION } from '#libs/cli/version';
import { figuresByKind } from './consumer-kinds';
import { ScrapeRead } from './scrape-read';

/**
 * Prometheus metrics of one process. Run counts come from the projector (each event is projected
 * once across replicas); step durations from the step workers; lag is read from JetStream at scrape;
 * the process's own (CPU, memory, event loop, GC) are prom-client's defaults.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly runsStarted = new Counter({
    name: 'scaffold_runs_started_total',
    help: 'Runs accepted (ScaffoldRequested projected)',
    registers: [this.registry],
  });
  readonly runsFinished = new Counter({
    name: 'scaffold_runs_finished_total',
    help: 'Runs that reached a terminal event, by status and the step they ended in',
    labelNames: ['status', 'step'],
    registers: [this.registry],
  });
  readonly stepDuration = new Histogram({
    name: 'scaffold_step_duration_seconds',
    help: 'Duration of step attempts',
    labelNames: ['step', 'outcome'],
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200],
    registers: [this.registry],
  });
  readonly stepHandoff = new Histogram({
    name: 'scaffold_step_handoff_seconds',
    help: 'From the event that triggers a step being appended to the step starting its work (first deliveries)',
    labelNames: ['step'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly projectionDelay = new Histogram({
    name: 'scaffold_projection_delay_seconds',
    help: 'From an event being appended to its projection in PostgreSQL',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly apiLatency = new Histogram({
    name: 'scaffold_api_request_duration_seconds',
    help: 'API latency by transport, route and status',
    labelNames: ['transport', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly stalledRunsRedriven = new Counter({
    name: 'scaffold_stalled_runs_redriven_total',
    help: 'Runs the stall check re-drove, by step: no event for STALLED_RUN_SECONDS, so no worker held them (a lost delivery)',
    labelNames: ['step'],
    registers: [this.registry],
  });
  readonly stepCrashes = new Counter({
    name: 'scaffold_step_crashes_total',
    help: 'Steps found, on their next delivery, to have been at work when their process died (a crash, an OOM kill), by step',
    labelNames: ['step'],
    registers: [this.registry],
  });
  readonly stepsParked = new Counter({
    name: 'scaffold_steps_parked_total',
    help: 'Steps failed instead of run again because they were at work when the process died MAX_STEP_CRASHES times, by step',
    labelNames: ['step'],
    registers: [this.registry],
  });
  readonly streamMessagesSkipped = new Counter({
    name: 'scaffold_stream_messages_skipped_total',
    help: 'Messages on event subjects that no run accepted: "invalid" (not a valid event of the subject\'s run) or "refused" (an event the run\'s rules refused, e.g. a second ScaffoldRequested)',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly natsRepliesRefused = new Counter({
    name: 'scaffold_nats_replies_refused_total',
    help: 'NATS API requests dropped unanswered because their reply subject is not a caller inbox (NATS_REPLY_PREFIXES), by request subject',
    labelNames: ['subject'],
    registers: [this.registry],
  });
  private lastProjectedAt = Date.now();

  private readonly lagRead = new ScrapeRead(() => this.setLagGauges());
  private readonly replicaRead = new ScrapeRead(() => this.setReplicaGauges());

  constructor(private readonly store: JetStreamEventStore) {
    collectDefaultMetrics({ register: this.registry });
    const buildInfo = new Gauge({
      name: 'scaffold_build_info',
      help: 'Always 1: what runs, as labels',
      labelNames: ['version', 'node_version'],
      registers: [this.registry],
    });
    buildInfo.set({ version: VERSION, node_version: process.version }, 1);
    // prom-client collects gauges concurrently: every lag gauge awaits the same JetStream read of this scrape.
    const lagGauge = (name: string, help: string, labelNames: string[] = []) =>
      new Gauge({ name, help, labelNames, registers: [this.registry], collect: () => this.lagRead.get() });
    const replicaGauge = (name: string, help: string) =>
      new Gauge({
        name,
        help,
        labelNames: ['stream'],
        registers: [this.registry],
        collect: () => this.replicaRead.get(),
      });
    this.gauges = {
      lastSeq: lagGauge('scaffold_stream_last_seq', 'Last sequence of the event stream'),
      consumerLag: lagGauge(
        'scaffold_consumer_lag_events',
        'Stream last sequence minus the consumer ack floor, by durable of the service ("other": the furthest behind of the rest)',
        ['consumer'],
      ),
      consumerPending: lagGauge(
        'scaffold_consumer_pending',
        'Messages not yet delivered to the consumer ("other": summed over the durables not the service\'s)',
        ['consumer'],
      ),
      consumerRedelivered: lagGauge(
        'scaffold_consumer_redelivered',
        'Messages redelivered and not yet acknowledged ("other": summed over the durables not the service\'s)',
        ['consumer'],
      ),
      projectionLagEvents: lagGauge('scaffold_projection_lag_events', 'Events appended but not yet in the read-model'),
      projectionLagSeconds: lagGauge(
        'scaffold_projection_lag_seconds',
        'How long the read-model has been behind the stream',
      ),
      replicasConfigured: replicaGauge(
        'scaffold_stream_replicas_configured',
        "Replicas in each stream's configuration (num_replicas)",
      ),
      replicasCurrent: replicaGauge(
        'scaffold_stream_replicas_current',
        'Copies of each stream that are up to date: its leader and the followers it reports current (0 while the stream answers no info)',
      ),
    };
  }

  private readonly gauges: Record<
    | 'lastSeq'
    | 'consumerLag'
    | 'consumerPending'
    | 'consumerRedelivered'
    | 'projectionLagEvents'
    | 'projectionLagSeconds'
    | 'replicasConfigured'
    | 'replicasCurrent',
    Gauge
  >;

  private async setLagGauges(): Promise<void> {
    const g = this.gauges;
    const { stream, consumers } = await this.store.consumers.states();
    g.lastSeq.set(stream.lastSeq);
    for (const gauge of [g.consumerLag, g.consumerPending, g.consumerRedelivered]) gauge.reset();
    for (const [consumer, figures] of figuresByKind(consumers)) {
      g.consumerLag.set({ consumer }, figures.lag);
      g.consumerPending.set({ consumer }, figures.pending);
      g.consumerRedelivered.set({ consumer }, figures.redelivered);
    }
    const projector = consumers.find((c) => c.name === PROJECTOR);
    if (projector) {
      g.projectionLagEvents.set(projector.lag);
      g.projectionLagSeconds.set(projector.lag > 0 ? (Date.now() - this.lastProjectedAt) / 1000 : 0);
    }
  }

  /**
   * Each of the service's streams. A stream whose info does not come (no leader elected, the API timed
   * out) keeps its configured figure and counts no current copy, so the replica alert fires rather than
   * going quiet.
   */
  private async setReplicaGauges(): Promise<void> {
    for (const [stream, replicas] of await this.store.replicas()) {
      if (!replicas) this.gauges.replicasCurrent.set({ stream }, 0);
      else {
        this.gauges.replicasConfigured.set({ stream }, replicas.configured);
        this.gauges.replicasCurrent.set({ stream }, replicas.current);
      }
    }
  }

  /** Called by the projector after an event is in the read-model. */
  projected(event: StoredEvent) {
    this.lastProjectedAt = Date.now();
    this.projectionDelay.observe(Math.max(0, (Date.now() - Date.parse(event.time)) / 1000));
    if (event.type === 'ScaffoldRequested') this.runsStarted.inc();
    if (event.type === 'ScaffoldSucceeded') this.runsFinished.inc({ status: 'succeeded', step: 'full-pass' });
    if (event.type === 'ScaffoldFailed') this.runsFinished.inc({ status: 'failed', step: event.data.step });
    if (event.type === 'ScaffoldCancelled')
      this.runsFinished.inc({ status: 'cancelled', step: event.data.step ?? 'none' });
  }
}
