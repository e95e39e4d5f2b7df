import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../common/public.decorator';
import { Metrics } from './metrics';

@Controller()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  /** Prometheus scrape endpoint (no API key, like /health). */
  @Public()
  @Get('metrics')
  async scrape(@Res() res: Response) {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
