import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { CallerView } from '../common/api-shapes';
import type { CallerIdentity } from '../common/api-keys';
import { Caller } from '../common/caller';
import { invalid } from '../common/api-error';
import { Public } from '../common/public.decorator';
import { CredentialPlanQuery } from './credential-plan-query';
import { Quotas } from './quotas';
import { asyncApiDocument } from './asyncapi';
import { openApiDocument } from './openapi';
import { ScaffoldCommands } from './scaffold-commands';
import { ScaffoldPreview } from './scaffold-preview';
import { ScaffoldQueries } from './scaffold-queries';

/** REST over the same commands, queries and preview the NATS API uses. Errors become {"error": ...} in the exception filter. */
@Controller('api/v1/scaffolds')
export class ScaffoldsController {
  constructor(
    private readonly commands: ScaffoldCommands,
    private readonly queries: ScaffoldQueries,
    private readonly previews: ScaffoldPreview,
    private readonly quotas: Quotas,
    private readonly credentialPlans: CredentialPlanQuery,
  ) {}

  @Post()
  async create(
    @Body() body: unknown,
    @Caller() caller: CallerIdentity,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res() res: Response,
  ) {
    const { run } = await this.commands.create(body, caller, idempotencyKey);
    res.status(202).location(`/api/v1/scaffolds/${run.id}`).json(run);
  }

  /** What a run would change, answered at once; nothing is appended or pushed. */
  @Post('preview')
  @HttpCode(200)
  preview(@Body() body: unknown, @Caller() caller: CallerIdentity) {
    return this.previews.preview(body, caller);
  }

  @Get()
  list(@Query() query: Record<string, unknown>, @Caller() caller: CallerIdentity) {
    return this.queries.list(query, caller);
  }

  @Get(':id')
  get(@Param('id') id: string, @Caller() caller: CallerIdentity) {
    return this.queries.get(id, caller);
  }

  @Get(':id/events')
  events(@Param('id') id: string, @Caller() caller: CallerIdentity) {
    return this.queries.events(id, caller);
  }

  /** The credential plan by class: which Secret keys a pass generates, derives or expects supplied (names only). */
  @Get(':id/credential-plan')
  credentialPlan(@Param('id') id: string, @Caller() caller: CallerIdentity) {
    return this.credentialPlans.forRun(id, caller);
  }

  /**
   * Server-Sent Events: every event of the run from Last-Event-ID (a stream sequence) on, ending after the
   * terminal one, or after SSE_MAX_SECONDS (the client resumes with Last-Event-ID). Streams are capped
   * per key and per replica (429).
   */
  @Get(':id/events/stream')
  async stream(
    @Param('id') id: string,
    @Caller() caller: CallerIdentity,
    @Headers('last-event-id') lastId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    if (lastId !== undefined && !/^\d{1,15}$/.test(lastId))
      throw invalid('Last-Event-ID', 'must be a stream sequence this API sent (a number)');
    const afterSeq = lastId === undefined ? undefined : Number(lastId);
    const release = this.quotas.openStream(caller);
    const abort = new AbortController();
    const timeLimit = setTimeout(() => abort.abort(), this.quotas.maxStreamMs);
    req.on('close', () => abort.abort());
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.status(200).set({
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();
    };
    try {
      await this.queries.follow(
        id,
        caller,
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
    } finally {
      clearTimeout(timeLimit);
      release();
    }
  }

  @Post(':id/redrive')
  @HttpCode(202)
  redrive(@Param('id') id: string, @Caller() caller: CallerIdentity) {
    return this.commands.redrive(id, caller);
  }

  @Get(':id/logs')
  async logs(@Param('id') id: string, @Caller() caller: CallerIdentity, @Res() res: Response) {
    res.type('text/plain').send(await this.queries.logs(id, caller));
  }

  @Post(':id/cancel')
  @HttpCode(202)
  cancel(@Param('id') id: string, @Caller() caller: CallerIdentity) {
    return this.commands.cancel(id, caller);
  }
}

/** The audit log across runs. */
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly queries: ScaffoldQueries) {}

  @Get()
  list(@Query() query: Record<string, unknown>, @Caller() caller: CallerIdentity) {
    return this.queries.allEvents(query, caller);
  }
}

/** Who the presented key is (its name and role): the console decides from it what to show, the API still decides what to answer. */
@Controller('api/v1/whoami')
export class WhoAmIController {
  @Get()
  whoami(@Caller() caller: CallerIdentity): CallerView {
    return { name: caller.name, role: caller.role };
  }
}

/** The API's own descriptions, public like /metrics: REST (OpenAPI 3.1) and NATS (AsyncAPI 3.0). */
@Controller('api/v1')
export class ApiDocumentsController {
  @Public()
  @Get('openapi.json')
  openapi() {
    return openApiDocument();
  }

  @Public()
  @Get('asyncapi.json')
  asyncapi() {
    return asyncApiDocument();
  }
}
