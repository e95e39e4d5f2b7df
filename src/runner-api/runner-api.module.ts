import { Module } from '@nestjs/common';
import { RunnerApiController } from './runner-api.controller';
import { RunnerCredentialGuard } from './runner-credential.guard';
import { RunnerCredentials } from './runner-credentials';
import { RunnerReports } from './runner-reports';

/**
 * The runner API: runner Jobs read their run and report through the service, which alone writes the
 * event, inputs and log streams. RunnerCredentials is exported for the Job launcher, which mints them.
 */
@Module({
  controllers: [RunnerApiController],
  providers: [RunnerCredentials, RunnerReports, RunnerCredentialGuard],
  exports: [RunnerCredentials],
})
export class RunnerApiModule {}
