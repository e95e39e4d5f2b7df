/** An error both APIs return as {"error": {"code", "message"}} with the HTTP status given here. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export const invalid = (field: string, problem: string) => new ApiError(400, 'invalid_request', `${field}: ${problem}`);
export const notFound = (what = 'run') => new ApiError(404, 'not_found', `${what} not found`);

export function errorBody(e: ApiError) {
  return { error: { code: e.code, message: e.message } };
}
