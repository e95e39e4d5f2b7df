import { isRunId } from '#libs/events';
import { invalid } from '../common/api-error';

/** The list cursor: the last row's (created_at, id), so runs created in the same millisecond are neither lost nor repeated. */
export const encodeCursor = (createdAt: Date, id: string) =>
  Buffer.from(`${createdAt.toISOString()}|${id}`).toString('base64url');

/** A cursor this API returned, or 400 (it is opaque to clients: anything else is a client bug). */
export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [time, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(time);
  if (Number.isNaN(createdAt.getTime()) || !isRunId(id)) throw invalid('cursor', 'is not a cursor this API returned');
  return { createdAt, id };
}
