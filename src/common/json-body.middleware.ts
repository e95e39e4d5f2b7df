import express, { NextFunction, Request, Response } from 'express';
import { ApiError, errorBody } from './api-error';

export const MAX_BODY_BYTES = 1024 * 1024;

/** REST bodies: JSON only, at most 1 MiB: 415, 413 and 400 (malformed) before any handler runs. */
export function jsonBodies() {
  const parse = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    const length = Number(req.header('content-length') ?? 0);
    if (length > 0 && !req.is('application/json')) return res.status(415).json(errorBody(new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json')));
    parse(req, res, (err?: any) => {
      if (!err) return next();
      if (err.type === 'entity.too.large') return res.status(413).json(errorBody(new ApiError(413, 'payload_too_large', 'request body is over 1 MiB')));
      return res.status(400).json(errorBody(new ApiError(400, 'invalid_json', 'body: malformed JSON')));
    });
  };
}
