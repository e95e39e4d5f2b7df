import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Caller } from '../common/caller';
import { Public } from '../common/public.decorator';
import { openApiDocument } from './openapi';
import { ScaffoldsService } from './scaffolds.service';

/** REST over the ScaffoldsService the NATS API uses too. Errors become {"error": ...} in the exception filter. */
@Controller('api/v1/scaffolds')
export class ScaffoldsController {
  constructor(private readonly scaffolds: ScaffoldsService) {}

  @Post()
  async create(@Body() body: unknown, @Caller() caller: string, @Headers('idempotency-key') idempotencyKey: string | undefined, @Res() res: Response) {
    const { run } = await this.scaffolds.create(body, caller, idempotencyKey);
    res.status(202).location(`/api/v1/scaffolds/${run.id}`).json(run);
  }

  /** What a run would change, answered at once; nothing is appended or pushed. */
  @Post('preview')
  @HttpCode(200)
  preview(@Body() body: unknown) {
    return this.scaffolds.preview(body);
  }

  @Get()
  list(@Query() query: Record<string, unknown>) {
    return this.scaffolds.list(query);
  }

  @Get(':id')
  get(@Param('id') id: string) {
    return this.scaffolds.get(id);
  }

  @Get(':id/events')
  events(@Param('id') id: string) {
    return this.scaffolds.events(id);
  }

  /** Server-Sent Events: every event of the run from Last-Event-ID (a stream sequence) on, ending after the terminal one. */
  @Get(':id/events/stream')
  async stream(@Param('id') id: string, @Headers('last-event-id') lastId: string | undefined, @Req() req: Request, @Res() res: Response) {
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
      await this.scaffolds.follow(
        id,
        afterSeq,
        (e) => {
          start();
          res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
        },
        abort.signal,
      );
      start();
      res.end();
    } catch (e) {
      if (started) res.end();
      else throw e;
    }
  }

  @Post(':id/redrive')
  @HttpCode(202)
  redrive(@Param('id') id: string, @Caller() caller: string) {
    return this.scaffolds.redrive(id, caller);
  }

  @Get(':id/logs')
  async logs(@Param('id') id: string, @Res() res: Response) {
    res.type('text/plain').send(await this.scaffolds.logs(id));
  }

  @Post(':id/cancel')
  @HttpCode(202)
  cancel(@Param('id') id: string, @Caller() caller: string) {
    return this.scaffolds.cancel(id, caller);
  }
}

/** The audit log across runs. */
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly scaffolds: ScaffoldsService) {}

  @Get()
  list(@Query() query: Record<string, unknown>) {
    return this.scaffolds.allEvents(query);
  }
}

@Controller('api/v1')
export class OpenApiController {
  @Public()
  @Get('openapi.json')
  openapi() {
    return openApiDocument();
  }
}
