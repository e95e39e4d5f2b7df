import { Module } from '@nestjs/common';
import { GitModule } from '../git/git.module';
import { CredentialPlanQuery } from './credential-plan-query';
import {
  ApiDocumentsController,
  EventsController,
  ScaffoldsController,
  WhoAmIController,
} from './scaffolds.controller';
import { ScaffoldsRpcController } from './scaffolds.rpc.controller';
import { LiveRuns } from './live-runs';
import { Quotas } from './quotas';
import { RequestChecks } from './request-checks';
import { ScaffoldCommands } from './scaffold-commands';
import { ScaffoldPreview } from './scaffold-preview';
import { ScaffoldQueries } from './scaffold-queries';

/** The scaffolds API: REST and NATS controllers over the same commands, queries and preview, which share one set of request checks. */
@Module({
  imports: [GitModule],
  controllers: [
    ScaffoldsController,
    EventsController,
    WhoAmIController,
    ApiDocumentsController,
    ScaffoldsRpcController,
  ],
  providers: [ScaffoldCommands, ScaffoldQueries, LiveRuns, ScaffoldPreview, RequestChecks, Quotas, CredentialPlanQuery],
})
export class ScaffoldsModule {}
