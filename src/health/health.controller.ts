import { Controller, Get, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { JetStreamEventStore } from '../../libs/event-store/src';
import { Public } from '../common/public.decorator';
import { EventStoreHealth } from '../event-store/event-store-health';
import { NatsClient } from '../event-store/nats-client';

/**
 * Two probes with different questions. Liveness asks only whether this process still answers: a
 * PostgreSQL or NATS outage must not make Kubernetes restart every replica (which would not fix it).
 * Readiness asks whether this replica can serve: JetStream and PostgreSQL both answer.
 */
@Controller()
export class HealthController {
  constructor(
    private readonly nats: NatsClient,
    private readonly store: JetStreamEventStore,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly eventLog: EventStoreHealth,
  ) {}

  @Public()
  @Get('livez')
  live() {
    return { status: 'ok' };
  }

  /**
   * 200 when JetStream and PostgreSQL answer and the streams and this replica's consumers exist; 503
   * naming what is down or `missing` (the service recreates those: see EventStoreHealth). `/health` is the same check.
   */
  @Public()
  @Get(['readyz', 'health'])
  async ready(@Res() res: Response) {
    const nats = this.nats.connection.isClosed() ? 'down' : (await this.store.reachable()) ? 'up' : 'down';
    const missing = nats === 'up' ? await this.eventLog.missing().catch(() => []) : [];
    const postgres = await this.ds.query('SELECT 1').then(
      () => 'up',
      () => 'down',
    );
    const ok = nats === 'up' && postgres === 'up' && missing.length === 0;
    res
      .status(ok ? 200 : 503)
      .json({ status: ok ? 'ok' : 'degraded', nats, postgres, ...(missing.length ? { missing } : {}) });
  }
}
