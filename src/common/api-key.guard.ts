import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { NatsContext } from '@nestjs/microservices';
import type { Request } from 'express';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config';
import { ApiError } from './api-error';
import { callerFor } from './api-keys';
import { setCaller } from './caller';
import { IS_PUBLIC } from './public.decorator';

/** The X-Api-Key of a request, from the HTTP header or the NATS message header. */
function presentedKey(context: ExecutionContext): string | undefined {
  if (context.getType() === 'rpc')
    return context.switchToRpc().getContext<NatsContext>().getHeaders()?.get('X-Api-Key') || undefined;
  return context.switchToHttp().getRequest<Request>().header('x-api-key');
}

/** Query parameters a key gets pasted into (compared in lower case). */
const KEY_PARAMETERS = new Set(['api_key', 'apikey', 'api-key', 'x-api-key', 'key', 'token', 'access_token']);

/**
 * Whether an HTTP request carries something like a key in its query string. Read from the URL as sent
 * (not Express's parsed query), so every spelling of the parameter is seen.
 */
function keyInQuery(context: ExecutionContext): boolean {
  if (context.getType() !== 'http') return false;
  const { originalUrl } = context.switchToHttp().getRequest<Request>();
  const query = originalUrl.split('?').slice(1).join('?');
  return [...new URLSearchParams(query).keys()].some((name) => KEY_PARAMETERS.has(name.toLowerCase()));
}

/**
 * Applied globally to REST and NATS alike: every handler needs a valid API key unless it is marked
 * @Public(), and none may come in the query string. Keys are compared in constant time (see callerFor); the caller's name goes to @Caller().
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    // A key in a URL ends up in proxies' and browsers' histories: refused on every route, even with a
    // right header, so a caller learns before the key spreads further (the request line logs no query).
    if (keyInQuery(context))
      throw new ApiError(
        401,
        'api_key_in_query',
        'API keys are accepted only in the X-Api-Key header, never in the URL',
      );
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    setCaller(context, callerFor(this.config.apiKeys, presentedKey(context)));
    return true;
  }
}
