import { Controller, Get, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { JetStreamEventStore } from '../../libs/event-store/src';
import { Public } from '../common/public.decorator';
import { NatsClient } from '../event-log/nats-client';

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
  ) {}

  @Public()
  @Get('livez')
  live() {
    return { status: 'ok' };
  }

  /** 200 when JetStream and PostgreSQL answer, 503 naming the one that does not. `/health` is the same check. */
  @Public()
  @Get(['readyz', 'health'])
  async ready(@Res() res: Response) {
    const nats = this.nats.connection.isClosed()
      ? 'down'
      : await this.store.jsm.getAccountInfo().then(
          () => 'up',
          () => 'down',
        );
    const postgres = await this.ds.query('SELECT 1').then(
      () => 'up',
      () => 'down',
    );
    const ok = nats === 'up' && postgres === 'up';
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', nats, postgres });
  }
}
