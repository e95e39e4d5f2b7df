import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, errorBody } from './api-error';

/** Every failure leaves as {"error": {"code", "message"}}; internals are logged, never returned. */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost) {
    const res = host.switchToHttp().getResponse<Response>();
    let error: ApiError;
    if (exception instanceof ApiError) error = exception;
    else if (exception instanceof HttpException) error = new ApiError(exception.getStatus(), exception.getStatus() === 404 ? 'not_found' : 'http_error', exception.message);
    else {
      this.logger.error({ err: String(exception) }, 'request failed');
      error = new ApiError(500, 'internal', 'internal error');
    }
    res.status(error.status).json(errorBody(error));
  }
}
