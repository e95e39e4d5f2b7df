import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Finds the caller for an API key. Keys are compared as SHA-256 digests with timingSafeEqual, and
 * every configured key is compared, so neither the key's length nor which key matched shows in time.
 */
export function callerFor(keys: Map<string, string>, presented: string | undefined): string {
  const given = digest(presented ?? '');
  let caller: string | null = null;
  for (const [name, key] of keys) {
    if (timingSafeEqual(given, digest(key)) && presented) caller = name;
  }
  if (!caller) throw new ApiError(401, 'unauthorized', 'missing or wrong X-Api-Key');
  return caller;
}
