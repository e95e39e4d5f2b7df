/**
 * Repository scopes: a URL prefix admits the repositories under it on a path-segment boundary, compared
 * in the one form every repository URL is used in, so no spelling of a URL reaches outside its prefix.
 */
import { normaliseRepoUrl, repoUrlProblem } from './repository-url';

/**
 * The URL as scopes compare it: its one form (normaliseRepoUrl) without ".git". Undefined for a URL
 * that has no such form (no URL, a query, or a path git could resolve elsewhere): it lies in no scope.
 */
function comparable(url: string): string | undefined {
  return repoUrlProblem(url) === null ? normaliseRepoUrl(url).replace(/\.git$/, '') : undefined;
}

/** Why a configured repository prefix cannot be used, or null. */
export function repositoryPrefixProblem(prefix: string): string | null {
  const problem = repoUrlProblem(prefix);
  return problem === null ? null : `is not a URL a scope can compare (it ${problem})`;
}

/**
 * Whether `url` lies under `prefix` on a path-segment boundary: https://h/team-a admits
 * https://h/team-a and https://h/team-a/x.git, not https://h/team-a-evil/x nor https://h/team-a/../b.
 */
export function withinPrefix(url: string, prefix: string): boolean {
  const [u, p] = [comparable(url), comparable(prefix)];
  return u !== undefined && p !== undefined && (u === p || u.startsWith(p + '/'));
}
