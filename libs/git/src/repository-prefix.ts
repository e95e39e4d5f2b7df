/**
 * Repository scopes: a URL prefix admits the repositories under it on a path-segment boundary, compared
 * in one normal form, so no spelling of a URL reaches outside its prefix.
 */
import { fluxUrlOf, normaliseRepoUrl } from './repository-url';

/**
 * Percent-encoded "/", "\" and "." (and a raw "\") could be decoded by a git server into a path the
 * normalised URL does not show (team-a%2F..%2Fteam-b): a URL holding one lies in no scope.
 */
const AMBIGUOUS = /%2f|%5c|%2e|\\/i;

/**
 * The URL as scopes compare it: scp-like git@host:path as ssh://git@host/path, then normalised as the
 * request's URL is (lower-case scheme and host, default port dropped, "." and ".." segments resolved),
 * without a trailing "/" or ".git". Undefined when it is no URL or holds an ambiguous encoding.
 */
function comparable(url: string): string | undefined {
  if (AMBIGUOUS.test(url)) return undefined;
  try {
    const u = new URL(normaliseRepoUrl(fluxUrlOf(url)));
    if (u.search || u.hash) return undefined;
    return u.href.replace(/\/+$/, '').replace(/\.git$/, '');
  } catch {
    return undefined;
  }
}

/** Why a configured repository prefix cannot be used, or null. */
export function repositoryPrefixProblem(prefix: string): string | null {
  return comparable(prefix) === undefined
    ? 'is not a URL (or holds a query, a fragment or an encoded "/", "\\" or ".")'
    : null;
}

/**
 * Whether `url` lies under `prefix` on a path-segment boundary: https://h/team-a admits
 * https://h/team-a and https://h/team-a/x.git, not https://h/team-a-evil/x nor https://h/team-a/../b.
 */
export function withinPrefix(url: string, prefix: string): boolean {
  const [u, p] = [comparable(url), comparable(prefix)];
  return u !== undefined && p !== undefined && (u === p || u.startsWith(p + '/'));
}
