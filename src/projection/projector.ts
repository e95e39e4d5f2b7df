import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { ACK, ALL_RUNS, Delivery, Disposition, EventStore, StaleRead } from '#libs/event-store';
import type { InvalidStreamMessage, StoredEvent } from '#libs/events';
import type { RunState } from '#libs/run-decider';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { ConsumerSpec, ConsumesEvents, EventConsumer } from '../event-store/event-consumer';
import { EVENT_STORE } from '../event-store/event-store.module';
import { LOGGER } from '../logging/logging.module';
import { Metrics } from '../metrics/metrics';
import { SkippedStreamMessage } from './entities';
import { PROJECTOR } from '../event-store/consumer-names';
import { replaceRuns } from './run-rows';

export { PROJECTOR };

/** At most this many events per read-model transaction. */
export const PROJECTION_BATCH = 100;

/**
 * The read-model projection: a durable consumer over every event. Batches of up to PROJECTION_BATCH
 * events (in stream order, one batch at a time) are applied in one transaction and acknowledged
 * together after the commit, so an older event of a run is never acknowledged after a newer one.
 * While PostgreSQL is down the batch is retried in place; nothing is lost and nothing applies twice.
 */
@Injectable()
@ConsumesEvents()
export class Projector implements EventConsumer {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  consumers(): ConsumerSpec[] {
    // Short ack wait: a batch held by a process that died comes back soon, and the read-model waits for it.
    const ackWaitMs = Math.min(this.config.steps.ackWaitMs, 10_000);
    const options = {
      durable: PROJECTOR,
      filterSubject: ALL_RUNS,
      ackWaitMs,
      concurrency: 1,
      batchSize: PROJECTION_BATCH,
      maxAckPending: PROJECTION_BATCH,
    };
    return [
      { options: { ...options, onInvalid: (m) => this.recordInvalid(m) }, handle: (batch) => this.project(batch) },
    ];
  }

  /** The projector sees each stream message once across replicas: it is where a skipped one is counted and kept for reports. */
  private async recordInvalid(m: InvalidStreamMessage) {
    this.metrics.streamMessagesSkipped.inc({ kind: 'invalid' });
    await this.ds
      .getRepository(SkippedStreamMessage)
      .upsert({ seq: String(m.seq), subject: m.subject, reason: m.reason.slice(0, 500), seen_at: new Date() }, ['seq']);
  }

  /** A run's history that includes the batch's events of it (a read from a stale stream leader is refused and retried). */
  private async readAtLeast(runId: string, seq: number): Promise<StoredEvent[]> {
    const { events, lastSeq } = await this.events.readRun(runId);
    if (lastSeq < seq) throw new StaleRead(runId, seq, lastSeq);
    return events;
  }

  /** Events of the batch that their run's rules refused (kept in the run's state): counted and logged once. */
  private reportRefused(events: StoredEvent[], folded: Map<string, RunState>) {
    const refused = new Map(
      [...folded.values()].flatMap((state) => (state.refused ?? []).map((r) => [r.seq, r] as const)),
    );
    for (const e of events) {
      const r = refused.get(e.seq);
      if (!r) continue;
      this.metrics.streamMessagesSkipped.inc({ kind: 'refused' });
      this.logger.warn(
        { run_id: e.run_id, seq: e.seq, type: e.type, reason: r.reason },
        'refused an event that cannot belong to its run',
      );
    }
  }

  /**
   * Each run touched by the batch is folded from its whole history in the stream, so the row never
   * depends on the order or number of deliveries (a redelivered older event after a newer one changes nothing).
   */
  async project(batch: Delivery[]): Promise<Disposition> {
    const events = batch.map((d) => d.event);
    const runIds = [...new Set(events.map((e) => e.run_id))];
    const lastSeq = Math.max(...events.map((e) => e.seq));
    for (let attempt = 0; ; attempt++) {
      try {
        const histories = await Promise.all(
          runIds.map((id) =>
            this.readAtLeast(id, Math.max(...events.filter((e) => e.run_id === id).map((e) => e.seq))),
          ),
        );
        const folded = await this.ds.transaction((m) => replaceRuns(m, histories, lastSeq));
        this.reportRefused(events, folded);
        break;
      } catch (e) {
        this.logger.warn({ err: String(e) }, 'projection paused');
        await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** attempt)));
      }
    }
    for (const e of events) this.metrics.projected(e);
    return ACK;
  }
}
