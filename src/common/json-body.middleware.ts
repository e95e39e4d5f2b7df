import express, { NextFunction, Request, Response } from 'express';
import { ApiError, errorBody } from './api-error';
import { duplicateKey } from './json-duplicates';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Why a JSON text is not an acceptable body beyond syntax: a key twice in one object (which JSON.parse would silently take the last of). */
export function bodyProblem(text: string): ApiError | null {
  const key = duplicateKey(text);
  return key === null ? null : new ApiError(400, 'invalid_json', `body: key "${key}" appears twice in one object`);
}

class DuplicateKeyError extends Error {
  constructor(readonly apiError: ApiError) {
    super(apiError.message);
  }
}

/** REST bodies: JSON only, at most 1 MiB: 415, 413 and 400 (malformed, duplicate keys) before any handler runs. */
export function jsonBodies() {
  const parse = express.json({
    limit: MAX_BODY_BYTES,
    strict: false,
    type: () => true,
    verify: (_req, _res, buf) => {
      const problem = bodyProblem(buf.toString('utf8'));
      if (problem) throw new DuplicateKeyError(problem);
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    // A body comes with a length or chunked: either way it must say it is JSON.
    const hasBody = req.header('transfer-encoding') !== undefined || Number(req.header('content-length') ?? 0) > 0;
    if (hasBody && !req.is('application/json')) return res.status(415).json(errorBody(new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json')));
    parse(req, res, (err?: any) => {
      if (!err) return next();
      if (err.type === 'entity.too.large') return res.status(413).json(errorBody(new ApiError(413, 'payload_too_large', 'request body is over 1 MiB')));
      if (err instanceof DuplicateKeyError) return res.status(400).json(errorBody(err.apiError));
      return res.status(400).json(errorBody(new ApiError(400, 'invalid_json', 'body: malformed JSON')));
    });
  };
}
