import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { LocalGitWorkspaces } from '../../libs/git/src';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';

/** The token of the service's `GitWorkspaces`: scratch clones for work that keeps nothing (the preview). */
export const GIT_WORKSPACES = Symbol('GIT_WORKSPACES');

/**
 * Git working copies for the API, made with the steps' identity, credentials and repository cache,
 * in WORK_DIR/preview/ (its one user is the preview; the steps clone into their run's own folder).
 */
@Module({
  providers: [{ provide: GIT_WORKSPACES, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new LocalGitWorkspaces(join(config.steps.workDir, 'preview'), config.steps) }],
  exports: [GIT_WORKSPACES],
})
export class GitModule {}
