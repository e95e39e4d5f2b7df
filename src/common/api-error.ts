import { HttpException } from '@nestjs/common';

/** An error both APIs return as {"error": {"code", "message"}} with the HTTP status given here. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds after which a refused request (429) may be made again: the Retry-After header on both transports. */
    readonly retryAfterSeconds?: number,
    /** Every problem of an invalid request, each naming its field (the message lists them too). */
    readonly details?: FieldProblem[],
  ) {
    super(message);
  }
}

export interface FieldProblem {
  field: string;
  problem: string;
}

/** 400 naming every problem at once: the message lists them, `details` has them one by one. */
export const invalidAll = (problems: FieldProblem[]) =>
  new ApiError(400, 'invalid_request', problems.map((p) => `${p.field}: ${p.problem}`).join('; '), undefined, problems);

/** 429 with Retry-After. */
export const tooMany = (code: string, message: string, retryAfterSeconds: number) =>
  new ApiError(429, code, message, Math.max(1, Math.ceil(retryAfterSeconds)));

export const invalid = (field: string, problem: string) => invalidAll([{ field, problem }]);
export const notFound = (what = 'run') => new ApiError(404, 'not_found', `${what} not found`);

export function errorBody(e: ApiError) {
  return { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } };
}

/** Any exception as the error the API returns: domain errors as they are, Nest's by status, anything else 500. */
export function toApiError(exception: unknown): ApiError {
  if (exception instanceof ApiError) return exception;
  if (exception instanceof HttpException)
    return new ApiError(
      exception.getStatus(),
      exception.getStatus() === 404 ? 'not_found' : 'http_error',
      exception.message,
    );
  return new ApiError(500, 'internal', 'internal error');
}
