import express, { NextFunction, Request, Response } from 'express';
import { ApiError, errorBody } from './api-error';
import { duplicateKey } from './json-duplicates';

export const MAX_BODY_BYTES = 1024 * 1024;

export const payloadTooLarge = () => new ApiError(413, 'payload_too_large', 'request body is over 1 MiB');

/**
 * A request body as REST and NATS take it: JSON.parse first (linear in the text), then the
 * duplicate-key check on text it accepted (a key twice in one object, which JSON.parse would
 * silently take the last of). The value, or the 400 to answer.
 */
export function parseJsonBody(text: string): { value: unknown } | { error: ApiError } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: new ApiError(400, 'invalid_json', 'body: malformed JSON') };
  }
  const key = duplicateKey(text);
  return key === null
    ? { value }
    : { error: new ApiError(400, 'invalid_json', `body: key "${key}" appears twice in one object`) };
}

/** REST bodies: JSON only, at most 1 MiB: 415, 413 and 400 (malformed, duplicate keys) before any handler runs. */
export function jsonBodies() {
  const readText = express.text({ limit: MAX_BODY_BYTES, type: () => true, defaultCharset: 'utf-8' });
  const answer = (res: Response, error: ApiError) => res.status(error.status).json(errorBody(error));
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    // A body comes with a length or chunked: either way it must say it is JSON.
    const hasBody = req.header('transfer-encoding') !== undefined || Number(req.header('content-length') ?? 0) > 0;
    if (hasBody && !req.is('application/json'))
      return answer(res, new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json'));
    readText(req, res, (err?: any) => {
      if (err)
        return answer(
          res,
          err.type === 'entity.too.large'
            ? payloadTooLarge()
            : new ApiError(400, 'invalid_json', 'body: malformed JSON'),
        );
      const text: unknown = req.body;
      if (typeof text !== 'string') return next(); // no body at all
      if (text.length === 0) {
        req.body = {};
        return next();
      }
      const parsed = parseJsonBody(text);
      if ('error' in parsed) return answer(res, parsed.error);
      req.body = parsed.value;
      next();
    });
  };
}
