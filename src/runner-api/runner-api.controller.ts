import { Body, Controller, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { Public } from '../common/public.decorator';
import { RUNNER_API_PREFIX } from './contract';
import { RunnerCredentialGuard } from './runner-credential.guard';
import { RunnerReports } from './runner-reports';

/**
 * The runner API, version 1: what a scaffold-runner Job reads and reports for its own run. Not an API
 * key's route (@Public skips the key guard): the run's own credential is checked instead.
 */
@Controller(`${RUNNER_API_PREFIX}/:id`)
@Public()
@UseGuards(RunnerCredentialGuard)
export class RunnerApiController {
  constructor(private readonly reports: RunnerReports) {}

  @Get('events')
  events(@Param('id') id: string) {
    return this.reports.events(id);
  }

  @Post('commands')
  @HttpCode(200)
  command(@Param('id') id: string, @Body() body: unknown) {
    return this.reports.report(id, body);
  }

  @Get('inputs/:name')
  input(@Param('id') id: string, @Param('name') name: string) {
    return this.reports.input(id, name);
  }

  @Put('inputs/:name')
  @HttpCode(204)
  async putInput(@Param('id') id: string, @Param('name') name: string, @Body() body: unknown) {
    await this.reports.putInput(id, name, body);
  }

  @Post('logs')
  @HttpCode(200)
  logs(@Param('id') id: string, @Body() body: unknown) {
    return this.reports.appendLogs(id, body);
  }
}
