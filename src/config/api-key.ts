import { createHash } from 'node:crypto';

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

export const sha256Of = (s: string) => createHash('sha256').update(s).digest();
