import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { isRunId } from '#libs/events';
import { ApiError } from '../common/api-error';
import { RunnerCredentials } from './runner-credentials';

const BEARER = /^Bearer ([A-Za-z0-9_-]{16,128})$/;

/**
 * The runner API's guard (REST only: runners report over HTTP): the bearer token must be the credential
 * minted for the run the path names. Unknown run, wrong run, expired or missing token are one answer, so
 * a token says nothing about other runs.
 */
@Injectable()
export class RunnerCredentialGuard implements CanActivate {
  constructor(private readonly credentials: RunnerCredentials) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const runId = req.params.id;
    const token = BEARER.exec(req.header('authorization') ?? '')?.[1];
    if (isRunId(runId) && (await this.credentials.accepts(runId, token))) return true;
    throw new ApiError(403, 'forbidden', 'the runner credential is not valid for this run');
  }
}
