import { fluxUrlOf } from '../../libs/git/src';
import { ApiError } from '../common/api-error';
import type { CallerIdentity } from '../common/api-keys';
import type { CreateRequest } from './create-request';
import { normaliseRepoUrl } from './create-request';

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
  return comparable(prefix) === undefined ? 'is not a URL (or holds a query, a fragment or an encoded "/", "\\" or ".")' : null;
}

/**
 * Whether `url` lies under `prefix` on a path-segment boundary: https://h/team-a admits
 * https://h/team-a and https://h/team-a/x.git, not https://h/team-a-evil/x nor https://h/team-a/../b.
 */
export function withinPrefix(url: string, prefix: string): boolean {
  const [u, p] = [comparable(url), comparable(prefix)];
  return u !== undefined && p !== undefined && (u === p || u.startsWith(p + '/'));
}

/** 403 unless every repository URL of the request lies under one of the caller's prefixes (a key without prefixes: any). */
export function checkRepositoryScope(caller: CallerIdentity, req: Pick<CreateRequest, 'repo_url' | 'flux_url'>): void {
  if (!caller.repositories) return;
  for (const [field, url] of [
    ['repo.url', req.repo_url],
    ['repo.flux_url', req.flux_url],
  ] as const) {
    if (url !== undefined && !caller.repositories.some((prefix) => withinPrefix(url, prefix))) {
      throw new ApiError(403, 'repository_not_allowed', `${field}: key "${caller.name}" may not use this repository`);
    }
  }
}

/**
 * 403 unless the Secrets the request names are in namespaces the caller may name: the key's
 * secret_namespaces, else SECRET_NAMESPACES (admins too: a key's role does not widen what it may read).
 */
export function checkSecretScope(caller: CallerIdentity, req: Pick<CreateRequest, 'credentials_secret' | 'target'>, defaultNamespaces: string[]): void {
  const allowed = caller.secretNamespaces ?? defaultNamespaces;
  const named = [
    ['credentials_secret', req.credentials_secret?.namespace],
    ['target.kubeconfig_secret', req.target.kind === 'kubeconfig_secret' ? req.target.ref.namespace : undefined],
  ] as const;
  for (const [field, namespace] of named) {
    if (namespace !== undefined && !allowed.includes(namespace)) {
      throw new ApiError(403, 'secret_namespace_not_allowed', `${field}: key "${caller.name}" may not name Secrets in namespace ${namespace}`);
    }
  }
}
