import type { LoggerService, LogLevel } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** Field names whose values never reach a log line. */
export const LOG_REDACT_PATHS = ['*.password', '*.token', '*.apiKey', '*.api_key', '*.sealing_cert_pem', 'headers["x-api-key"]', '*.headers["x-api-key"]', '*.authorization', 'REGISTRY_PASSWORD'];

export function makeLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, redact: { paths: LOG_REDACT_PATHS, censor: '***' } });
}

const PINO_LEVEL: Record<LogLevel, 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal'> = { log: 'info', error: 'error', warn: 'warn', debug: 'debug', verbose: 'trace', fatal: 'fatal' };

/**
 * Nest's own log lines (start-up, route mapping, errors of the framework) through the service's pino
 * logger, so the process writes one JSON format with one redaction list. (nestjs-pino would do this
 * too, but its releases for Nest 12 require Node 22.)
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  private write(level: LogLevel, message: unknown, params: unknown[]) {
    // Nest passes the context (the class that logs) as the last parameter; an error's stack before it.
    const context = typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
    const fields: Record<string, unknown> = context ? { context } : {};
    if (level === 'error' && params.length > 1 && typeof params[0] === 'string') fields.stack = params[0];
    if (message instanceof Error) this.logger[PINO_LEVEL[level]]({ ...fields, err: message }, message.message);
    else if (typeof message === 'object' && message !== null) this.logger[PINO_LEVEL[level]]({ ...fields, ...message });
    else this.logger[PINO_LEVEL[level]](fields, String(message));
  }

  log(message: unknown, ...params: unknown[]) {
    this.write('log', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]) {
    this.write('fatal', message, params);
  }
}
