import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error';

/**
 * What a key may do. admin: everything, every run; operator: create, preview, read, cancel and
 * re-drive its own runs; reader: read its own runs.
 */
export const ROLES = ['admin', 'operator', 'reader'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiKey {
  key: string;
  role: Role;
}

/** Who is calling: the key's name (recorded as requested_by, the owner of what it creates) and its role. */
export interface CallerIdentity {
  name: string;
  role: Role;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Finds the caller for an API key. Keys are compared as SHA-256 digests with timingSafeEqual, and
 * every configured key is compared, so neither the key's length nor which key matched shows in time.
 */
export function callerFor(keys: Map<string, ApiKey>, presented: string | undefined): CallerIdentity {
  const given = digest(presented ?? '');
  let caller: CallerIdentity | null = null;
  for (const [name, { key, role }] of keys) {
    if (timingSafeEqual(given, digest(key)) && presented) caller = { name, role };
  }
  if (!caller) throw new ApiError(401, 'unauthorized', 'missing or wrong X-Api-Key');
  return caller;
}

/** Whether this caller may see and act on a run that `owner` created (admins: every run). */
export const owns = (caller: CallerIdentity, owner: string | undefined) => caller.role === 'admin' || caller.name === owner;

/** 403 unless the caller's role allows changing things (create, preview, cancel, redrive). */
export function requireOperator(caller: CallerIdentity): void {
  if (caller.role === 'reader') throw new ApiError(403, 'forbidden', `key "${caller.name}" has the reader role: it may only read its own runs`);
}
