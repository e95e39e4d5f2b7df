import { Controller, Get, Param, Query } from '@nestjs/common';
import type { CallerIdentity } from '../common/api-keys';
import { Caller } from '../common/caller';
import { EnvironmentQueries } from './environment-queries';

/** REST over the environments' reads; the same queries answer NATS (EnvironmentsRpcController). */
@Controller('api/v1/environments')
export class EnvironmentsController {
  constructor(private readonly queries: EnvironmentQueries) {}

  @Get()
  list(@Query() query: Record<string, unknown>, @Caller() caller: CallerIdentity) {
    return this.queries.list(query, caller);
  }

  @Get(':id')
  get(@Param('id') id: string, @Caller() caller: CallerIdentity) {
    return this.queries.get(id, caller);
  }
}
