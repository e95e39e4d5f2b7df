/**
 * Where a reference environment lies in its repository and where the new cluster goes. An
 * environment is a name under clusters/ (`dev`, Flux's documented layout) or any
 * repository-relative folder (`kubernetes/main` in the home-ops layout, `kubernetes` in a
 * single-cluster repository); the new cluster goes beside it, or, into another repository, at the
 * reference's own path.
 */
import { posix, resolve } from 'node:path';
import { GeneratorInputError } from './errors';
import { isRepoFolder } from './repo-files';

/**
 * The repository-relative folder of a reference environment: `clusters/<name>` for a name, the
 * folder itself for a path; a bare name the reference has no clusters/ environment of, but a
 * top-level folder of that name, is that folder (a single-cluster `kubernetes/`).
 */
export function referenceEnvDir(root: string, referenceEnv: string): string {
  if (referenceEnv.includes('/')) return referenceEnv;
  const underClusters = `clusters/${referenceEnv}`;
  if (!isRepoFolder(root, underClusters) && isRepoFolder(root, referenceEnv)) return referenceEnv;
  return underClusters;
}

/** `clusters/dev` given as a folder is the environment `dev`: one spelling for the models, the marker and the caches. */
export const canonicalReferenceEnv = (referenceEnv: string) =>
  /^clusters\/[^/]+$/.test(referenceEnv) ? referenceEnv.slice('clusters/'.length) : referenceEnv;

/** The environment's own name (its folder's last part): what its comments, settings and host names call it. */
export const envNameOf = (envDir: string) => posix.basename(envDir);

/**
 * The name the environment's files call it by, for rewriting comments: none for a single-cluster
 * folder (`kubernetes/` is the repository's only cluster, and "kubernetes" in a comment means Kubernetes).
 */
export const environmentName = (envDir: string) => (envDir.includes('/') ? envNameOf(envDir) : undefined);

/**
 * The name the reference environment's files, paths and remote keys call it by (`dev`, `main` for
 * kubernetes/main), from the --reference-env given; none for a single-cluster folder (see environmentName).
 */
export const referenceEnvironmentName = (root: string, referenceEnv: string) =>
  environmentName(referenceEnvDir(root, referenceEnv));

/** Whether the environment is given as a folder rather than by its name under clusters/. */
export const isFolderForm = (envDir: string) => !envDir.startsWith('clusters/');

/** True when `repoDir` and the reference are two repositories (the new cluster goes into another one). */
export const isSeparateRepository = (repoDir: string, referenceRoot: string) =>
  resolve(repoDir) !== resolve(referenceRoot);

/**
 * The new cluster's folder. Under clusters/ it is always `clusters/<name>` (Flux's layout keeps every
 * cluster there). A folder-form environment gets a sibling (`kubernetes/<name>` beside
 * `kubernetes/main`), except in another repository, where the environment is written at the
 * reference's own path (a repository per customer) unless that folder is already someone else's
 * there (`ownedHere` tells whether the marker there is this cluster's). A single-cluster reference
 * (`kubernetes/`, the whole repository's cluster) can only go to another repository.
 */
export function newClusterDir(
  envDir: string,
  clusterName: string,
  target: { separate: boolean; holdsEnvDir: boolean; ownedHere: boolean },
): string {
  if (!isFolderForm(envDir)) return `clusters/${clusterName}`;
  const atOwnPath = target.separate && (!target.holdsEnvDir || target.ownedHere);
  if (atOwnPath) return envDir;
  if (!envDir.includes('/'))
    throw new GeneratorInputError(
      `reference environment ${envDir}/ is the whole repository's cluster (a single-cluster layout): give --repo another repository, where the new cluster is written at ${envDir}/`,
    );
  return `${posix.dirname(envDir)}/${clusterName}`;
}
