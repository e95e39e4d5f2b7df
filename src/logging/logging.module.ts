import { DynamicModule, Global, Module } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';

export const LOGGER = Symbol('LOGGER');

/** Probes and scrapes arrive every few seconds: a line for each would bury the requests that matter. */
const QUIET_PATHS = /^\/(healthz|livez|readyz|health|metrics)(\?|$)/;

/** A request's URL with its query string replaced by `***`: a key or token pasted there never reaches a log. */
export function withoutQuery(url: string | undefined): string | undefined {
  const at = url?.indexOf('?') ?? -1;
  return at < 0 ? url : `${url!.slice(0, at)}?***`;
}

/** A refusal (4xx) is the API doing its job; only the service's own failures are errors. */
function httpLevel(_req: IncomingMessage, res: ServerResponse, err?: Error) {
  return err || res.statusCode >= 500 ? 'error' : 'info';
}

/**
 * The process's pino logger (redacting), made by the entry point and shared by every module, and
 * nestjs-pino over it: Nest's own lines, one line per HTTP request and per NATS message, all in the
 * same JSON with the same redaction. A request line names method, path and status only: headers carry
 * the API key, bodies may carry credentials and query strings are where keys get pasted, so none is logged.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(logger: Logger): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            logger,
            autoLogging: { ignore: (req) => QUIET_PATHS.test(req.url ?? '') },
            customLogLevel: httpLevel,
            // Lines written while handling a request carry its id only; the request itself is on its own line.
            quietReqLogger: true,
            serializers: {
              req: (req) => ({ id: req.id, method: req.method, url: withoutQuery(req.url) }),
              res: (res) => ({ statusCode: res.statusCode }),
            },
          },
          microservice: { customLogLevel: (_ctx, err) => (err ? 'warn' : 'info') },
        }),
      ],
      providers: [{ provide: LOGGER, useValue: logger }],
      exports: [LOGGER, LoggerModule],
    };
  }
}
