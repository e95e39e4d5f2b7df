import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { JetStreamEventStore } from '#libs/event-store';
import { EventStoreHealth } from '../event-store/event-store-health';
import { NatsClient } from '../event-store/nats-client';

export interface ReadinessReport {
  ok: boolean;
  nats: 'up' | 'down';
  postgres: 'up' | 'down';
  /** Streams or consumers of this replica that are missing or were replaced (the service recreates them). */
  missing: string[];
}

/**
 * Whether this replica can serve: JetStream and PostgreSQL both answer and its streams and consumers
 * exist. One check for /readyz and the scaffold_ready gauge, so the probe and the alert never disagree.
 */
@Injectable()
export class Readiness {
  constructor(
    private readonly nats: NatsClient,
    private readonly store: JetStreamEventStore,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly eventLog: EventStoreHealth,
  ) {}

  async check(): Promise<ReadinessReport> {
    const nats = this.nats.connection.isClosed() ? 'down' : (await this.store.reachable()) ? 'up' : 'down';
    const missing = nats === 'up' ? await this.eventLog.missing().catch(() => []) : [];
    const postgres = await this.ds.query('SELECT 1').then(
      () => 'up' as const,
      () => 'down' as const,
    );
    return { ok: nats === 'up' && postgres === 'up' && missing.length === 0, nats, postgres, missing };
  }
}
