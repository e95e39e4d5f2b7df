import { existsSync, statSync } from 'node:fs';
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { classifyGitError } from './errors';
import { GitAccess } from './git-access';
import type { CachedBranch, RepositoryCache } from './repository-cache';
import { headFromRefFiles } from './ref-files';
import { conePatternFile } from './sparse-cone';
import { execInHelper } from './helper-process';
import type { RepoRef } from './repository-url';

export interface GitIdentity {
  name: string;
  email: string;
}

/** Trailers that make a run's commit findable on the remote, so a redelivered step never pushes twice. */
export function runTrailers(runId: string, pass: string): string {
  return `Scaffold-Run: ${runId}\nScaffold-Pass: ${pass}`;
}

/**
 * Characters that make a name read as another in a log, a review or a terminal while git sees them:
 * C1 controls, the soft hyphen, bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9),
 * zero-width ones (U+200B-D, U+2060-4, U+180E, U+FEFF) and the line and paragraph separators.
 */
const DECEPTIVE = /[\u0080-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** A character as U+XXXX: named, since shown as itself it would be invisible or turn the message around. */
const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why a branch name is not one git takes for `--branch` (git check-ref-format's rules), or null. Also
 * refused: HEAD and names under refs/, which git would read as something else than a branch, and
 * names that would read as another (DECEPTIVE).
 */
export function branchProblem(branch: string): string | null {
  if (branch.length === 0 || branch.length > 200) return 'must be 1 to 200 characters';
  if (branch === 'HEAD' || branch === '@') return `"${branch}" is not a branch name`;
  if (branch.startsWith('refs/')) return 'must be a branch name, not a ref (no refs/ prefix)';
  if (branch.startsWith('-')) return 'must not start with "-"';
  // Control characters, space, ~ ^ : ? * [ \ and DEL are never allowed in a ref (the control range is the point of this pattern).
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(branch))
    return 'must not contain spaces, control characters or any of ~ ^ : ? * [ \\';
  const deceptive = DECEPTIVE.exec(branch)?.[0];
  if (deceptive)
    return `must not contain bidirectional, zero-width or line-separator characters (${codePoint(deceptive)})`;
  if (branch.includes('..')) return 'must not contain ".."';
  if (branch.includes('@{')) return 'must not contain "@{"';
  if (branch.includes('//') || branch.startsWith('/') || branch.endsWith('/'))
    return 'must not begin or end with "/" or contain "//"';
  if (branch.endsWith('.')) return 'must not end with "."';
  for (const part of branch.split('/')) {
    if (part.startsWith('.')) return `component "${part}" must not begin with "."`;
    if (part.endsWith('.lock')) return `component "${part}" must not end with ".lock"`;
  }
  return null;
}

/**
 * The folders (cone mode) a working copy checks out, chosen from the paths of the branch's files; null
 * for the whole tree. Files directly in a folder on the way to one of them are checked out too.
 */
export type CheckoutScope = (files: string[]) => string[] | null;

const isFolder = (abs: string) => existsSync(abs) && statSync(abs).isDirectory();

/** The paths of the files of a commit (`HEAD` in a working copy). */
async function filesAt(access: GitAccess, dir: string, commit: string, signal?: AbortSignal): Promise<string[]> {
  const listed = await access.run(
    { op: 'raw', baseDir: dir, args: ['ls-tree', '-r', '-z', '--name-only', commit] },
    signal,
  );
  return listed.split('\0').filter(Boolean);
}

/**
 * Checks out `cone` in a clone: in cone mode, with a sparse index, so that each folder left out is one
 * index entry; or, for none, the whole tree. Returns the cone, null when the whole tree is checked out.
 */
async function checkOutCone(access: GitAccess, dir: string, cone: string[] | null, signal?: AbortSignal) {
  const args = cone
    ? ['sparse-checkout', 'set', '--cone', '--sparse-index', '--end-of-options', ...cone]
    : ['sparse-checkout', 'disable'];
  await access.run({ op: 'raw', baseDir: dir, args }, signal);
  return cone;
}

/** A folder as git keeps it in a cone: no leading ./, no trailing /. */
const coneFolder = (folder: string) => posix.normalize(folder).replace(/^\.\/|\/+$/g, '');

/** A sparse checkout chosen before the clone: the cone for the files of `commit` (null: the whole tree). */
interface CheckoutPlan {
  commit: string;
  folders: string[] | null;
}

/** The cone for the commit the cache holds, from the cache's listing of it (one git, no working copy yet). */
async function planCheckout(
  access: GitAccess,
  cached: CachedBranch,
  scope: CheckoutScope,
  signal?: AbortSignal,
): Promise<CheckoutPlan> {
  const folders = scope(await filesAt(access, cached.dir, cached.commit, signal))?.map(coneFolder) ?? null;
  return { commit: cached.commit, folders };
}

/**
 * A clone template holding only the cone's `info/sparse-checkout` (git copies a template into the new
 * repository before its checkout; with the cone settings the clone then checks out the cone itself).
 */
async function writeConeTemplate(template: string, patterns: string): Promise<void> {
  await mkdir(join(template, 'info'), { recursive: true });
  await writeFile(join(template, 'info', 'sparse-checkout'), patterns);
}

/** How the clone checks out: the planned cone, the whole tree, or (decided after) the files at the top only. */
function checkoutOptions(scope: CheckoutScope | undefined, plan: CheckoutPlan | undefined, template?: string) {
  if (!scope || (plan && plan.folders === null)) return [];
  if (!template) return ['--sparse'];
  return [
    `--template=${template}`,
    ...['core.sparseCheckout=true', 'core.sparseCheckoutCone=true', 'index.sparse=true'].flatMap((c) => [
      '--config',
      c,
    ]),
  ];
}

/**
 * The cone of a fresh clone: the planned one when the clone is on the commit it was planned for (the
 * clone checked it out when `clonedCone`, or git is asked to for a cone it writes itself); otherwise (no
 * plan, or another fetch moved the cache's branch meanwhile) chosen again from the clone's own files.
 */
async function settleCone(
  access: GitAccess,
  dir: string,
  branch: string,
  scope: CheckoutScope,
  plan: CheckoutPlan | undefined,
  clonedCone: boolean,
  signal?: AbortSignal,
): Promise<string[] | null> {
  if (plan && (await headFromRefFiles(join(dir, '.git'), branch)) === plan.commit) {
    return clonedCone || plan.folders === null ? plan.folders : checkOutCone(access, dir, plan.folders, signal);
  }
  return checkOutCone(access, dir, scope(await filesAt(access, dir, 'HEAD', signal)), signal);
}

/** Whether a folder is checked out by a cone: it, or a folder above it, is one of the cone's. */
const inCone = (cone: Set<string>, folder: string) =>
  folder.split('/').some((_, i, parts) => cone.has(parts.slice(0, i + 1).join('/')));

/** Where fetchBranch keeps another branch of the remote (outside refs/remotes: no remote is configured by name). */
const otherBranchRef = (branch: string) => `refs/scaffolder/${branch}`;

/**
 * One working copy for one pass of one run. User strings reach git only as positional values after
 * validation (the URL scheme and branch are checked at the API edge; git allows only the configured
 * protocols and a clone's source follows `--`).
 */
export class GitWorkspace {
  private readonly config: string[];
  private readonly cone: Set<string> | null;

  private constructor(
    readonly dir: string,
    readonly repo: RepoRef,
    identity: GitIdentity,
    private readonly access: GitAccess,
    /** The folders of a sparse checkout (cone mode), null for the whole tree: what a commit adds outside widens it first. */
    cone: string[] | null,
  ) {
    this.cone = cone && new Set(cone.map(coneFolder));
    this.config = [
      `user.name=${identity.name}`,
      `user.email=${identity.email}`,
      'commit.gpgsign=false',
      // A working copy lives for one run: every commit and fetch would otherwise start `git maintenance
      // run --auto` (one more process, tens of milliseconds on busy cores) to tidy a folder about to go.
      'maintenance.auto=false',
      'gc.auto=0',
    ];
  }

  /** Whether only some folders are checked out (cone mode). */
  get sparse(): boolean {
    return this.cone !== null;
  }

  /** One git command in the working copy, with the run's identity. */
  private git(args: string[]): Promise<string> {
    return this.access.run({ op: 'raw', baseDir: this.dir, config: this.config, args });
  }

  /** A command that talks to the remote: its failure says why in words a person can act on. */
  private async gitWithRemote(args: string[]): Promise<void> {
    try {
      await this.git(args);
    } catch (e) {
      throw classifyGitError(e, this.repo.url);
    }
  }

  /**
   * A working copy of the branch. With a cache, made from the cache's copy brought up to date (its
   * objects borrowed, not copied); without, cloned from the remote. Either way commands that talk to
   * the remote name its URL (the copy's `origin` may be the cache). Aborting `signal` kills the git
   * processes (a server that never answers holds a clone for ever). With a `scope`, only the folders it
   * chooses are checked out (the other blobs are never read): with a cache, chosen from the cache's
   * listing before the clone, which then checks out that cone itself.
   */
  static async clone(
    dir: string,
    repo: RepoRef,
    identity: GitIdentity,
    access: GitAccess = GitAccess.NONE,
    cache?: RepositoryCache,
    signal?: AbortSignal,
    scope?: CheckoutScope,
  ): Promise<GitWorkspace> {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const cached = cache && (await cache.refresh(repo, signal));
    const plan = scope && cached ? await planCheckout(access, cached, scope, signal) : undefined;
    const patterns = plan?.folders ? conePatternFile(plan.folders) : null;
    // Beside the copy, not in it (git clones only into an empty folder); gone whatever the clone does.
    const template = patterns === null ? undefined : { dir: join(dirname(dir), `${basename(dir)}.template`), patterns };
    try {
      if (template) await writeConeTemplate(template.dir, template.patterns);
      const options = ['--branch', repo.branch, '--single-branch', '--no-tags'];
      if (cached) options.push('--shared');
      options.push(...checkoutOptions(scope, plan, template?.dir));
      await access
        .run({ op: 'clone', source: cached?.dir ?? repo.url, dir, options }, signal)
        .catch((e) => Promise.reject(classifyGitError(e, repo.url)));
    } finally {
      if (template) await rm(template.dir, { recursive: true, force: true });
    }
    const cone = scope ? await settleCone(access, dir, repo.branch, scope, plan, template !== undefined, signal) : null;
    return new GitWorkspace(dir, repo, identity, access, cone);
  }

  /**
   * The commit of this run and pass already on the branch, if a previous attempt pushed it: in the
   * working copy, or (`remote`) on the remote branch as last fetched.
   */
  async findRunCommit(
    runId: string,
    pass: string,
    where: 'local' | 'remote' | { branch: string } = 'local',
  ): Promise<string | null> {
    const ref = where === 'local' ? 'HEAD' : where === 'remote' ? this.remoteRef : otherBranchRef(where.branch);
    const out = await this.git([
      'log',
      '--format=%H',
      '--fixed-strings',
      '--all-match',
      `--grep=Scaffold-Run: ${runId}`,
      `--grep=Scaffold-Pass: ${pass}`,
      ref,
    ]);
    return out.trim().split('\n').filter(Boolean)[0] ?? null;
  }

  /**
   * Stages exactly the given paths and says how many files changed (0: the tree already holds them), in
   * a copy with nothing staged before. `git add --verbose` names each file it adds or removes, so no `git
   * status` is needed to count them. When git refuses the add (a path ignored or not there), the tree is
   * asked whether anything changed: nothing is the unchanged outcome it was before; anything is git's error.
   */
  async stage(paths: string[]): Promise<number> {
    if (this.cone) await this.widenCone(this.cone, paths);
    try {
      const named = await this.git(['add', '--all', '--verbose', '--', ...paths]);
      return named.split('\n').filter(Boolean).length;
    } catch (e) {
      if ((await this.changedFiles(paths)) === 0) return 0;
      throw e;
    }
  }

  private async changedFiles(paths: string[]): Promise<number> {
    const out = await this.git(['status', '--porcelain', '--untracked-files=all', '--', ...paths]);
    return out.split('\n').filter(Boolean).length;
  }

  /** Commits what is staged, with the run's trailers. */
  async commitStaged(subject: string, runId: string, pass: string): Promise<string> {
    await this.git(['commit', '--no-verify', '-m', subject, '-m', runTrailers(runId, pass)]);
    return this.head();
  }

  /** Commits exactly the given paths, with the run's trailers. */
  async commit(paths: string[], subject: string, runId: string, pass: string): Promise<string> {
    await this.stage(paths);
    return this.commitStaged(subject, runId, pass);
  }

  /**
   * Takes the folders of `paths` into the cone: git adds nothing outside it, and a later reset or
   * rebase would take the pass's own files off the disk (a shared folder the pass copied in, a new
   * cluster's folder beside the others). A folder is its own; a file, the folder holding it. Folders the
   * cone already holds need nothing (git is not started for them: a pass usually writes only there).
   */
  private async widenCone(cone: Set<string>, paths: string[]): Promise<void> {
    const folders = paths
      .map((p) => coneFolder(isFolder(join(this.dir, p)) ? p : posix.dirname(p)))
      .filter((p) => p !== '.' && p !== '' && !inCone(cone, p));
    if (folders.length === 0) return;
    await this.git(['sparse-checkout', 'add', '--end-of-options', ...new Set(folders)]);
    for (const folder of folders) cone.add(folder);
  }

  /**
   * The commit the working copy is on: read from the ref files without starting git (a pass asks after
   * each commit and before reusing a copy), else from git.
   */
  async head(): Promise<string> {
    return (
      (await headFromRefFiles(join(this.dir, '.git'), this.repo.branch)) ??
      (await this.git(['rev-parse', 'HEAD'])).trim()
    );
  }

  async push(): Promise<void> {
    await this.gitWithRemote([
      'push',
      '--porcelain',
      '--end-of-options',
      this.repo.url,
      `HEAD:refs/heads/${this.repo.branch}`,
    ]);
  }

  /**
   * Pushes the working copy's head to another branch of the remote (a merge request's head), only when that branch
   * is where the caller last saw it: `expected` null, absent (a branch someone else made is never overwritten).
   */
  async pushTo(branch: string, expected: string | null): Promise<void> {
    await this.gitWithRemote([
      'push',
      '--porcelain',
      `--force-with-lease=refs/heads/${branch}:${expected ?? ''}`,
      '--end-of-options',
      this.repo.url,
      `HEAD:refs/heads/${branch}`,
    ]);
  }

  /**
   * Fetches another branch of the remote (a merge request's head) into a ref of its own, for findRunCommit:
   * its head commit, or null when the remote has no such branch.
   */
  async fetchBranch(branch: string): Promise<string | null> {
    let listed: string;
    try {
      listed = await this.git(['ls-remote', '--', this.repo.url, `refs/heads/${branch}`]);
    } catch (e) {
      throw classifyGitError(e, this.repo.url);
    }
    const head = listed.split('\t')[0].trim();
    if (!head) return null;
    await this.gitWithRemote([
      'fetch',
      '--no-tags',
      '--end-of-options',
      this.repo.url,
      `+refs/heads/${branch}:${otherBranchRef(branch)}`,
    ]);
    return head;
  }

  /**
   * The remote-tracking ref of the branch (the branch name was checked at the edge). Only `fetch` moves
   * it: a push names the remote's URL, not a remote, so git does not update it after a push.
   */
  private get remoteRef(): string {
    return `refs/remotes/origin/${this.repo.branch}`;
  }

  /** The commit the remote branch is on now (one request, no objects fetched). */
  async remoteHead(): Promise<string> {
    try {
      const out = await this.git(['ls-remote', '--', this.repo.url, `refs/heads/${this.repo.branch}`]);
      return out.split('\t')[0].trim();
    } catch (e) {
      throw classifyGitError(e, this.repo.url);
    }
  }

  /** True when the working copy holds exactly its commit: nothing changed, nothing untracked or ignored. */
  async isClean(): Promise<boolean> {
    const out = await this.git(['status', '--porcelain', '--untracked-files=all', '--ignored']);
    return out.trim() === '';
  }

  /** Brings the remote-tracking ref up to the remote branch's head. */
  async fetch(): Promise<void> {
    await this.gitWithRemote([
      'fetch',
      '--no-tags',
      '--end-of-options',
      this.repo.url,
      // Forced: the remote-tracking ref follows the remote branch even where it was rewritten.
      `+refs/heads/${this.repo.branch}:${this.remoteRef}`,
    ]);
  }

  /**
   * After a rejected push and a fetch: replays the local commits on the remote's new head. Runs into
   * one fleet repository write their own folders, so this is the usual outcome; false (with the
   * working copy as it was) when another writer changed the same files.
   */
  async rebaseOnRemote(): Promise<boolean> {
    try {
      await this.git(['rebase', '--no-verify', '--no-autostash', this.remoteRef]);
      return true;
    } catch {
      await this.git(['rebase', '--abort']).catch(() => undefined);
      return false;
    }
  }

  /** Moves onto the remote's head as last fetched, dropping the local commit and files. */
  async resetToRemote(): Promise<void> {
    try {
      await this.git(['reset', '--hard', this.remoteRef]);
      await this.git(['clean', '-fdx']);
    } catch (e) {
      throw classifyGitError(e, this.repo.url);
    }
  }

  /**
   * Deletes the working copy. A fleet repository's checkout is thousands of files: Node's own recursive
   * delete drives every lstat and unlink from the event loop (profiled: 6 s of main thread for 200 runs
   * into one repository), so `rm -rf` in the helper process does it.
   */
  async remove(): Promise<void> {
    await execInHelper('rm', ['-rf', '--', this.dir]);
    // Its parent (a pass's copy lives in WORK_DIR/<run>/) goes too once nothing else is in it; another
    // copy of the same run still at work keeps it (rmdir refuses a folder that is not empty).
    await rmdir(dirname(this.dir)).catch(() => undefined);
  }
}
