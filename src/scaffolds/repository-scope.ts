import { withinPrefix } from '#libs/git';
import { ApiError } from '../common/api-error';
import type { CallerIdentity } from '../common/api-keys';
import type { CreateRequest } from './create-request';

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
export function checkSecretScope(
  caller: CallerIdentity,
  req: Pick<CreateRequest, 'credentials_secret' | 'target'>,
  defaultNamespaces: string[],
): void {
  const allowed = caller.secretNamespaces ?? defaultNamespaces;
  const named = [
    ['credentials_secret', req.credentials_secret?.namespace],
    ['target.kubeconfig_secret', req.target.kind === 'kubeconfig_secret' ? req.target.ref.namespace : undefined],
  ] as const;
  for (const [field, namespace] of named) {
    if (namespace !== undefined && !allowed.includes(namespace)) {
      throw new ApiError(
        403,
        'secret_namespace_not_allowed',
        `${field}: key "${caller.name}" may not name Secrets in namespace ${namespace}`,
      );
    }
  }
}
