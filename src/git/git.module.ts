import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { GitAccess, GitAccessError, LocalGitWorkspaces, RepositoryCache } from '#libs/git';
import { AppConfig, ConfigError } from '../config/config';
import { APP_CONFIG } from '../config/config.module';

/** The token of the process's `GitWorkspaces`: the passes' working copies and the preview's scratch clones. */
export const GIT_WORKSPACES = Symbol('GIT_WORKSPACES');

/**
 * Git access prepared once per process: credentials and CA written where only git reads them (a folder
 * or file that cannot be used stops the process at start, naming the setting), and the repository cache
 * under WORK_DIR/repo-cache/ that working copies borrow objects from.
 */
export function localGitWorkspaces(config: AppConfig): LocalGitWorkspaces {
  let access: GitAccess;
  try {
    access = GitAccess.prepare(config.git);
  } catch (e) {
    if (e instanceof GitAccessError) throw new ConfigError(e.message);
    throw e;
  }
  const repoCache = new RepositoryCache(join(config.steps.workDir, 'repo-cache'), access);
  // Scratch clones (the preview) in WORK_DIR/preview/; a pass names its own folder under its run's.
  return new LocalGitWorkspaces(join(config.steps.workDir, 'preview'), {
    gitIdentity: config.steps.gitIdentity,
    gitAccess: access,
    repoCache,
  });
}

/** Git working copies for the API and the step consumers, made with the process's identity, credentials and repository cache. */
@Module({
  providers: [{ provide: GIT_WORKSPACES, inject: [APP_CONFIG], useFactory: localGitWorkspaces }],
  exports: [GIT_WORKSPACES],
})
export class GitModule {}
