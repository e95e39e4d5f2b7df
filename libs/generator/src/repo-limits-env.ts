import { DEFAULT_REPO_LIMITS, RepoLimits } from '#libs/runtime';
import { GeneratorInputError } from './errors';

/** The service's limits on what a repository makes the generator read, from the same variables (unset: the defaults). */
export function repoLimitsFrom(env: NodeJS.ProcessEnv): RepoLimits {
  const setting = (name: string, fallback: number) => {
    const given = env[name];
    if (given === undefined || given === '') return fallback;
    if (!/^[1-9][0-9]*$/.test(given))
      throw new GeneratorInputError(
        `${name} must be a positive whole number of ${name === 'MAX_REPO_FILES' ? 'files' : 'bytes'}`,
      );
    return Number(given);
  };
  return {
    maxFileBytes: setting('MAX_REPO_FILE_BYTES', DEFAULT_REPO_LIMITS.maxFileBytes),
    maxRepoBytes: setting('MAX_REPO_BYTES', DEFAULT_REPO_LIMITS.maxRepoBytes),
    maxRepoFiles: setting('MAX_REPO_FILES', DEFAULT_REPO_LIMITS.maxRepoFiles),
  };
}
