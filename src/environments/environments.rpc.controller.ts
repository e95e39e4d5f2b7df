import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { CallerIdentity } from '../common/api-keys';
import { Caller } from '../common/caller';
import { EnvironmentQueries } from './environment-queries';

type Body = Record<string, unknown> | null;

/** The NATS request/reply API on environments.v1.*: the same queries and answers as REST. */
@Controller()
export class EnvironmentsRpcController {
  constructor(private readonly queries: EnvironmentQueries) {}

  @MessagePattern('environments.v1.list')
  list(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.queries.list(body ?? {}, caller);
  }

  @MessagePattern('environments.v1.get')
  get(@Payload() body: Body, @Caller() caller: CallerIdentity) {
    return this.queries.get(body?.id, caller);
  }
}
