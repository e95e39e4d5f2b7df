import { Controller } from '@nestjs/common';
import { Ctx, MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import type { CallerIdentity } from '../common/api-keys';
import { Caller } from '../common/caller';
import { ScaffoldCommands } from './scaffold-commands';
import { ScaffoldPreview } from './scaffold-preview';
import { ScaffoldQueries } from './scaffold-queries';

/** Request bodies over NATS: an object with the run id, or the query fields. */
type Body = Record<string, unknown> | null;
const idOf = (body: Body) => body?.id;

/**
 * The NATS request/reply API on scaffolds.v1.* (queue group gitops-scaffolder): the same providers and
 * the same bodies as REST, plain JSON in and out (see NatsJsonSerializer), the API key in the X-Api-Key header.
 */
@Controller()
export class ScaffoldsRpcController {
  constructor(
    private readonly commands: ScaffoldCommands,
    private readonly queries: ScaffoldQueries,
    private readonly previews: ScaffoldPreview,
  ) {}

  @MessagePattern('scaffolds.v1.create')
  async create(@Payload() body: unknown, @Caller() caller: CallerIdentity, @Ctx() ctx: NatsContext) {
    return (await this.commands.create(body, caller, ctx.getHeaders()?.get('Idempotency-Key') || undefined)).run;
  }

  @MessagePattern('scaffolds.v1.preview')
  preview(@Payload() body: unknown, @Caller() caller: CallerIdentity) {
    return this.previews.preview(body, caller);
  }

  @MessagePattern('scaffolds.v1.get')
  get(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.queries.get(idOf(body), caller);
  }

  @MessagePattern('scaffolds.v1.list')
  list(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.queries.list(body ?? {}, caller);
  }

  @MessagePattern('scaffolds.v1.logs')
  async logs(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return { id: idOf(body), log: await this.queries.logs(idOf(body), caller) };
  }

  @MessagePattern('scaffolds.v1.events')
  events(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.queries.events(idOf(body), caller);
  }

  @MessagePattern('scaffolds.v1.cancel')
  cancel(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.commands.cancel(idOf(body), caller);
  }

  @MessagePattern('scaffolds.v1.redrive')
  redrive(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.commands.redrive(idOf(body), caller);
  }

  @MessagePattern('scaffolds.v1.events.all')
  allEvents(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.queries.allEvents(body ?? {}, caller);
  }
}
