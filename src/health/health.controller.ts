import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../common/public.decorator';
import { Readiness } from './readiness';

/**
 * Two probes with different questions. Liveness asks only whether this process still answers: a
 * PostgreSQL or NATS outage must not make Kubernetes restart every replica (which would not fix it).
 * Readiness asks whether this replica can serve: JetStream and PostgreSQL both answer.
 */
@Controller()
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

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
    const { ok, nats, postgres, missing } = await this.readiness.check();
    res
      .status(ok ? 200 : 503)
      .json({ status: ok ? 'ok' : 'degraded', nats, postgres, ...(missing.length ? { missing } : {}) });
  }
}
