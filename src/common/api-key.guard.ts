import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { NatsContext } from '@nestjs/microservices';
import type { Request } from 'express';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config';
import { callerFor } from './api-keys';
import { setCaller } from './caller';
import { IS_PUBLIC } from './public.decorator';

/** The X-Api-Key of a request, from the HTTP header or the NATS message header. */
function presentedKey(context: ExecutionContext): string | undefined {
  if (context.getType() === 'rpc')
    return context.switchToRpc().getContext<NatsContext>().getHeaders()?.get('X-Api-Key') || undefined;
  return context.switchToHttp().getRequest<Request>().header('x-api-key');
}

/**
 * Applied globally to REST and NATS alike: every handler needs a valid API key unless it is marked
 * @Public(). Keys are compared in constant time (see callerFor); the caller's name goes to @Caller().
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    setCaller(context, callerFor(this.config.apiKeys, presentedKey(context)));
    return true;
  }
}
