/** What the API's reads of the read-model share: answering 503 while PostgreSQL is down, and a list's parameters. */
import { isClusterName } from '#libs/validation';
import { ApiError, invalid } from './api-error';

/** Reads that need PostgreSQL answer 503 while it is down, naming it. */
export async function fromReadModel<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError(503, 'read_model_unavailable', 'PostgreSQL (the read-model) is not answering');
  }
}

/** `limit` of a list query: its default when absent, else an integer in 1..max (400 otherwise). */
export function pageLimit(limit: unknown, byDefault: number, max: number): number {
  const n = limit === undefined ? byDefault : Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > max) throw invalid('limit', `must be an integer from 1 to ${max}`);
  return n;
}

/** `cluster_name` of a list query: one cluster's runs (an exact name; 400 for a name no request would accept). */
export function clusterFilter(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const problem = isClusterName(value);
  if (problem) throw invalid('cluster_name', problem);
  return String(value);
}
