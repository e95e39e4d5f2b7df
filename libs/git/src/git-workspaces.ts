import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { GitAccess } from './git-access';
import { CheckoutScope, GitIdentity, GitWorkspace } from './git-workspace';
import type { RepositoryCache } from './repository-cache';
import type { RepoRef } from './repository-url';

/** Working copies made with this process's git identity, credentials and repository cache. */
export interface GitWorkspaces {
  /**
   * A working copy of the branch in `dir`, kept until its caller removes it (a pass keeps it across a
   * push race); with a `scope`, of the folders it chooses only (a sparse checkout).
   */
  clone(dir: string, repo: RepoRef, signal?: AbortSignal, scope?: CheckoutScope): Promise<GitWorkspace>;
  /**
   * A working copy that lives as long as one piece of work (a preview), so its caller neither builds
   * paths nor cleans up: the folder is removed however the work ends, aborted by `signal` included.
   */
  withScratchClone<T>(repo: RepoRef, signal: AbortSignal, work: (ws: GitWorkspace) => Promise<T>): Promise<T>;
}

/** What a clone needs besides its repository: made once per process by the service's git module. */
export interface CloneSettings {
  gitIdentity: GitIdentity;
  gitAccess: GitAccess;
  repoCache?: RepositoryCache;
}

/** Scratch clones in folders of their own under `root`, one per piece of work, so concurrent ones never meet. */
export class LocalGitWorkspaces implements GitWorkspaces {
  constructor(
    private readonly root: string,
    private readonly settings: CloneSettings,
  ) {}

  clone(dir: string, repo: RepoRef, signal?: AbortSignal, scope?: CheckoutScope): Promise<GitWorkspace> {
    return GitWorkspace.clone(
      dir,
      repo,
      this.settings.gitIdentity,
      this.settings.gitAccess,
      this.settings.repoCache,
      signal,
      scope,
    );
  }

  async withScratchClone<T>(repo: RepoRef, signal: AbortSignal, work: (ws: GitWorkspace) => Promise<T>): Promise<T> {
    const dir = join(this.root, randomUUID());
    try {
      const ws = await this.clone(join(dir, 'repo'), repo, signal);
      return await work(ws);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
