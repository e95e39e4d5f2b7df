import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Runtime } from '../runtime';
import { callerFor } from './auth';
import { openApiDocument } from './openapi';

export const RUNTIME = Symbol('RUNTIME');

/** REST over the same ScaffoldApi the NATS API uses. Errors become {"error": ...} in the exception filter. */
@Controller('api/v1/scaffolds')
export class ScaffoldsController {
  constructor(@Inject(RUNTIME) private readonly rt: Runtime) {}

  private caller(req: Request) {
    return callerFor(this.rt.config.apiKeys, req.header('x-api-key'));
  }

  @Post()
  async create(@Req() req: Request, @Res() res: Response) {
    const caller = this.caller(req);
    const { run } = await this.rt.api.create(req.body, caller, req.header('idempotency-key') ?? undefined);
    res.status(202).location(`/api/v1/scaffolds/${run.id}`).json(run);
  }

  @Get()
  async list(@Req() req: Request) {
    this.caller(req);
    return this.rt.api.list(req.query);
  }

  @Get(':id')
  async get(@Req() req: Request) {
    this.caller(req);
    return this.rt.api.get(req.params.id);
  }

  @Get(':id/events')
  async events(@Req() req: Request) {
    this.caller(req);
    return this.rt.api.events(req.params.id);
  }

  /** Server-Sent Events: every event of the run from Last-Event-ID (a stream sequence) on, ending after the terminal one. */
  @Get(':id/events/stream')
  async stream(@Req() req: Request, @Res() res: Response) {
    this.caller(req);
    const lastId = req.header('last-event-id');
    const afterSeq = lastId !== undefined && /^\d+$/.test(lastId) ? Number(lastId) : undefined;
    const abort = new AbortController();
    req.on('close', () => abort.abort());
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      res.flushHeaders();
    };
    try {
      await this.rt.api.follow(req.params.id, afterSeq, (e) => {
        start();
        res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      }, abort.signal);
      start();
      res.end();
    } catch (e) {
      if (started) res.end();
      else throw e;
    }
  }

  @Post(':id/redrive')
  async redrive(@Req() req: Request, @Res() res: Response) {
    const caller = this.caller(req);
    res.status(202).json(await this.rt.api.redrive(req.params.id, caller));
  }

  @Get(':id/logs')
  async logs(@Req() req: Request, @Res() res: Response) {
    this.caller(req);
    res.type('text/plain').send(await this.rt.api.logs(req.params.id));
  }

  @Post(':id/cancel')
  async cancel(@Req() req: Request, @Res() res: Response) {
    const caller = this.caller(req);
    res.status(202).json(await this.rt.api.cancel(req.params.id, caller));
  }
}

@Controller('api/v1/events')
export class EventsController {
  constructor(@Inject(RUNTIME) private readonly rt: Runtime) {}

  @Get()
  async list(@Req() req: Request) {
    callerFor(this.rt.config.apiKeys, req.header('x-api-key'));
    return this.rt.api.allEvents(req.query);
  }
}

@Controller()
export class HealthController {
  constructor(@Inject(RUNTIME) private readonly rt: Runtime) {}

  @Get('api/v1/openapi.json')
  openapi() {
    return openApiDocument();
  }

  /** Prometheus scrape endpoint (no API key, like /health). */
  @Get('metrics')
  async metrics(@Res() res: Response) {
    res.type(this.rt.metrics.registry.contentType).send(await this.rt.metrics.registry.metrics());
  }

  @Get('health')
  async health(@Res() res: Response) {
    const h = await this.rt.health();
    res.status(h.ok ? 200 : 503).json({ status: h.ok ? 'ok' : 'degraded', nats: h.nats, postgres: h.postgres });
  }
}
