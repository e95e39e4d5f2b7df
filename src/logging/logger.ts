import pino, { Logger } from 'pino';

/** Field names whose values never reach a log line. */
export const LOG_REDACT_PATHS = [
  '*.password',
  '*.token',
  '*.apiKey',
  '*.api_key',
  '*.sealing_cert_pem',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  '*.authorization',
  '*.headers.authorization',
  'REGISTRY_PASSWORD',
];

export function makeLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, redact: { paths: LOG_REDACT_PATHS, censor: '***' } });
}
