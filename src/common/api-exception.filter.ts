import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { throwError } from 'rxjs';
import { LOGGER } from '../logging/logging.module';
import { errorBody, toApiError } from './api-error';
import { RpcReply } from './nats-json.serializer';

/**
 * Every failure, on either transport, leaves as {"error": {"code", "message"}} with its status: the
 * HTTP status over REST, the Status-Code header over NATS. Internals are logged, never returned.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost) {
    const error = toApiError(exception);
    if (error.status >= 500 && error.code === 'internal')
      this.logger.error({ err: String(exception), transport: host.getType() }, 'request failed');
    if (host.getType() === 'rpc')
      return throwError(() => new RpcReply(error.status, errorBody(error), error.retryAfterSeconds));
    const res = host.switchToHttp().getResponse<Response>();
    if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
    res.status(error.status).json(errorBody(error));
  }
}
