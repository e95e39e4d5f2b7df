import { timingSafeEqual } from 'node:crypto';
import { ApiKey, KeyScope, Role, sha256Of } from '../config/api-key';
import { ApiError } from './api-error';

/** Who is calling: the key's name (recorded as requested_by, the owner of what it creates), its role and its scope. */
export interface CallerIdentity extends KeyScope {
  name: string;
  role: Role;
}

/**
 * Finds the caller for an API key. Keys are compared as SHA-256 digests with timingSafeEqual, and
 * every configured key is compared, so neither the key's length nor which key matched shows in time.
 */
export function callerFor(keys: Map<string, ApiKey>, presented: string | undefined): CallerIdentity {
  const given = sha256Of(presented ?? '');
  let caller: CallerIdentity | null = null;
  for (const [name, { sha256, ...rest }] of keys) {
    if (timingSafeEqual(given, sha256) && presented) caller = { name, ...rest };
  }
  if (!caller) throw new ApiError(401, 'unauthorized', 'missing or wrong X-Api-Key');
  return caller;
}

/** Whether this caller may see and act on a run that `owner` created (admins: every run). */
export const owns = (caller: CallerIdentity, owner: string | undefined) =>
  caller.role === 'admin' || caller.name === owner;

/** 403 unless the caller's role allows changing things (create, preview, cancel, redrive). */
export function requireOperator(caller: CallerIdentity): void {
  if (caller.role === 'reader')
    throw new ApiError(403, 'forbidden', `key "${caller.name}" has the reader role: it may only read its own runs`);
}
