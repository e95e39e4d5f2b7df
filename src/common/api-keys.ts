import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error';

/**
 * What a key may do. admin: everything, every run; operator: create, preview, read, cancel and
 * re-drive its own runs; reader: read its own runs.
 */
export const ROLES = ['admin', 'operator', 'reader'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Where a key may act. `repositories`: URL prefixes its repo.url and repo.flux_url must lie under
 * (absent: any repository GIT_ALLOWED_HOSTS admits). `secretNamespaces`: the namespaces its
 * credentials_secret and kubeconfig_secret may name (absent: SECRET_NAMESPACES).
 */
export interface KeyScope {
  repositories?: string[];
  secretNamespaces?: string[];
}

/** A configured key: only its SHA-256 digest is kept (API_KEYS_FILE may give nothing else). */
export interface ApiKey extends KeyScope {
  sha256: Buffer;
  role: Role;
}

/** Who is calling: the key's name (recorded as requested_by, the owner of what it creates), its role and its scope. */
export interface CallerIdentity extends KeyScope {
  name: string;
  role: Role;
}

export const sha256Of = (s: string) => createHash('sha256').update(s).digest();

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
export const owns = (caller: CallerIdentity, owner: string | undefined) => caller.role === 'admin' || caller.name === owner;

/** 403 unless the caller's role allows changing things (create, preview, cancel, redrive). */
export function requireOperator(caller: CallerIdentity): void {
  if (caller.role === 'reader') throw new ApiError(403, 'forbidden', `key "${caller.name}" has the reader role: it may only read its own runs`);
}
