import { Module } from '@nestjs/common';
import { EventsController, OpenApiController, ScaffoldsController } from './scaffolds.controller';
import { ScaffoldsRpcController } from './scaffolds.rpc.controller';
import { Quotas } from './quotas';
import { ScaffoldsService } from './scaffolds.service';

/** The scaffolds API: REST and NATS controllers over one application service. */
@Module({
  controllers: [ScaffoldsController, EventsController, OpenApiController, ScaffoldsRpcController],
  providers: [ScaffoldsService, Quotas],
})
export class ScaffoldsModule {}
