import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GitAccess } from './git-access';
import { classifyGitError } from './errors';
import { commitFromRefFiles } from './ref-files';
import type { RepoRef } from './repository-url';

/** git's gc.auto default (6,700 loose objects) spread over its 256 object folders, as git estimates it from one. */
const LOOSE_OBJECTS_PER_FOLDER = Math.ceil(6700 / 256);
/** git's gc.autoPackLimit default. */
const PACK_LIMIT = 50;

/** A branch's cache folder and the commit its fetch found the remote branch on. */
export interface CachedBranch {
  dir: string;
  commit: string;
}

/**
 * A bare copy of each remote branch this process works on, under WORK_DIR, brought up to date by one
 * incremental fetch before each working copy is made from it (`git clone --shared`: the working copy
 * borrows the cache's objects instead of copying them). A fleet repository's history grows with every
 * cluster scaffolded into it; without the cache every pass would download and index all of it.
 */
export class RepositoryCache {
  /** The fetch each cache folder is waiting for, so one process never runs two fetches into one folder. */
  private readonly fetching = new Map<string, Promise<string>>();

  constructor(
    private readonly root: string,
    private readonly access: GitAccess = GitAccess.NONE,
  ) {}

  /**
   * The cache folder of a branch, holding the remote's head as of now, and that head (another fetch
   * may move the folder's branch on later); aborting `signal` kills this caller's fetch.
   */
  async refresh(repo: RepoRef, signal?: AbortSignal): Promise<CachedBranch> {
    const dir = join(
      this.root,
      `${createHash('sha256').update(`${repo.url}\0${repo.branch}`).digest('hex').slice(0, 32)}.git`,
    );
    const before = this.fetching.get(dir) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.bringUpToDate(dir, repo, signal));
    this.fetching.set(dir, mine);
    try {
      return { dir, commit: await mine };
    } finally {
      if (this.fetching.get(dir) === mine) this.fetching.delete(dir);
    }
  }

  /**
   * Packs the cache's objects once there are many loose ones or packs. Each fetch used to start `git
   * maintenance run --auto` to decide that (one more git process per pass); git's own measures are read
   * here instead (the loose objects in one of the 256 object folders against gc.auto / 256, the packs
   * against gc.autoPackLimit), and git runs only then. A failure leaves the cache as usable as before,
   * as a failure of git's automatic run would.
   */
  private async tidyWhenDue(dir: string): Promise<void> {
    // No such folder yet: nothing there.
    const entries = (folder: string) => readdir(join(dir, 'objects', folder)).catch(() => [] as string[]);
    const loose = (await entries('17')).length;
    const packs = (await entries('pack')).filter((f) => f.endsWith('.pack')).length;
    if (loose <= LOOSE_OBJECTS_PER_FOLDER && packs <= PACK_LIMIT) return;
    await this.access.run({ op: 'raw', baseDir: dir, args: ['maintenance', 'run', '--auto'] }).catch(() => undefined);
  }

  /** Fetches (or first clones) the branch into `dir`; the commit the branch is on then. */
  private async bringUpToDate(dir: string, repo: RepoRef, signal?: AbortSignal): Promise<string> {
    await this.fetchOrClone(dir, repo, signal);
    const ref = `refs/heads/${repo.branch}`;
    return (
      (await commitFromRefFiles(dir, ref)) ??
      (
        await this.access.run({ op: 'raw', baseDir: dir, args: ['rev-parse', '--verify', `${ref}^{commit}`] }, signal)
      ).trim()
    );
  }

  private async fetchOrClone(dir: string, repo: RepoRef, signal?: AbortSignal): Promise<void> {
    if (existsSync(dir)) {
      try {
        await this.access.run(
          {
            op: 'raw',
            baseDir: dir,
            args: [
              'fetch',
              '--no-tags',
              '--no-auto-maintenance',
              'origin',
              `+refs/heads/${repo.branch}:refs/heads/${repo.branch}`,
            ],
          },
          signal,
        );
        await this.tidyWhenDue(dir);
        return;
      } catch (e) {
        throw classifyGitError(e, repo.url);
      }
    }
    // Cloned beside and renamed into place: a clone cut short never looks like a cache.
    mkdirSync(this.root, { recursive: true });
    const partial = `${dir}.${randomBytes(4).toString('hex')}.partial`;
    try {
      // Repacking is allowed, pruning never: working copies borrow the cache's objects while it runs.
      await this.access.run(
        {
          op: 'clone',
          source: repo.url,
          dir: partial,
          options: [
            '--bare',
            '--branch',
            repo.branch,
            '--single-branch',
            '--no-tags',
            '--config',
            'gc.pruneExpire=never',
          ],
        },
        signal,
      );
    } catch (e) {
      rmSync(partial, { force: true, recursive: true });
      throw classifyGitError(e, repo.url);
    }
    // Another process sharing the folder may have put its copy in place first: then that one serves.
    if (existsSync(dir)) rmSync(partial, { force: true, recursive: true });
    else renameSync(partial, dir);
  }
}
