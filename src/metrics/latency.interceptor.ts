import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import type { Request, Response } from 'express';
import { Observable, tap } from 'rxjs';
import { toApiError } from '../common/api-error';
import { Metrics } from './metrics';

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** API latency by transport, route pattern (never an id) and status, for REST and NATS alike. */
@Injectable()
export class LatencyInterceptor implements NestInterceptor {
  constructor(private readonly metrics: Metrics) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const started = process.hrtime.bigint();
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<Request>();
      const res = context.switchToHttp().getResponse<Response>();
      // Observed when the answer is sent, so errors (written by the exception filter) count with their status.
      res.on('finish', () => {
        const route = `${req.method} ${req.baseUrl ?? ''}${req.route?.path ?? ''}`;
        this.metrics.apiLatency.observe({ transport: 'http', route, status: String(res.statusCode) }, seconds(started));
      });
      return next.handle();
    }
    const route = context.switchToRpc().getContext<NatsContext>().getSubject();
    const observe = (status: number) =>
      this.metrics.apiLatency.observe({ transport: 'nats', route, status: String(status) }, seconds(started));
    return next.handle().pipe(tap({ next: () => observe(200), error: (e) => observe(toApiError(e).status) }));
  }
}
