/**
 * What the lifecycle of an environment asks of the reference's git history: which commit a working copy
 * is at (recorded in the ownership marker), how far a newer commit is, and the reference's files as a
 * recorded commit held them. Every read goes through one small interface (GitRunner), so a test or
 * another transport can stand in for the git program. Nothing here writes to the reference's working
 * copy, its index or its refs: a commit's files are read through a temporary index of our own.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkoutLimitProblem, RepoLimits } from '#libs/runtime';
import { GeneratorInputError } from './errors';

/** Runs git in a folder and returns its stdout; throws when git fails. `env` adds variables for this call only. */
export interface GitRunner {
  run(dir: string, args: string[], env?: Record<string, string>): string;
}

/**
 * The only variables of this process git gets: where programs and the home folder are, the locale and
 * the temporary folder. Nothing else (the service's keys and passwords) reaches git or a program the
 * repository's configuration names, and no GIT_DIR or GIT_INDEX_FILE set around us (inside a hook)
 * points git at another repository or index.
 */
const INHERITED = /^(PATH|HOME|USER|LOGNAME|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z]+)$/;
export const ownEnvironment = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name, value]) => INHERITED.test(name) && value !== undefined),
  ) as Record<string, string>;

/** git's arguments and options for a read in `dir`: configuration narrowed so a read cannot start another program from the
 * repository's own settings (an fsmonitor hook) nor take a lock a user's git would then meet. */
const gitRead = (dir: string, args: string[], env?: Record<string, string>) =>
  [
    'git',
    ['-c', 'core.fsmonitor=false', '--no-optional-locks', '-C', dir, ...args],
    {
      encoding: 'utf8' as const,
      env: { ...ownEnvironment(), GIT_TERMINAL_PROMPT: '0', ...env },
      maxBuffer: 64 * 1024 * 1024,
    },
  ] as const;

/** The git program, waited for (the command line's reads, one after another). */
export const GIT_PROGRAM: GitRunner = {
  run: (dir, args, env) => {
    const [file, gitArgs, options] = gitRead(dir, args, env);
    return execFileSync(file, gitArgs, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  },
};

/** Runs git in a folder without waiting for it: its stdout, or a rejection when git fails. */
export interface AsyncGitRunner {
  run(dir: string, args: string[]): Promise<string>;
}

/** The git program, not waited for: a pass's reads run while its thread generates. */
export const GIT_PROGRAM_ASYNC: AsyncGitRunner = {
  run: (dir, args) =>
    new Promise((resolvePromise, reject) => {
      const [file, gitArgs, options] = gitRead(dir, args);
      execFile(file, gitArgs, options, (error, stdout) => (error ? reject(error) : resolvePromise(stdout)));
    }),
};

/** Where a reference stands in git: its HEAD commit, its folder in the repository, and whether its files differ from that commit. */
export interface ReferenceRevision {
  commit: string;
  /** The reference's folder relative to the repository's top ('' at the top). */
  path: string;
  /** Uncommitted changes (untracked files included) under the reference's folder: the commit alone cannot reproduce the output. */
  dirty: boolean;
}

const attempt = (read: () => string): string | undefined => {
  try {
    return read().trim();
  } catch {
    return undefined;
  }
};

/** git's trimmed answer in `dir`, or undefined when git fails (no working copy, an unknown commit). */
export const gitAnswer = (git: GitRunner, dir: string, args: string[]): string | undefined =>
  attempt(() => git.run(dir, args));

/**
 * The revision of a reference folder, or undefined when it is no git working copy with a commit (a plain
 * folder, an empty repository). Its three reads run side by side and never reject: a read that fails
 * leaves the revision unknown, as a folder outside git does.
 */
export async function referenceRevision(
  dir: string,
  git: AsyncGitRunner = GIT_PROGRAM_ASYNC,
): Promise<ReferenceRevision | undefined> {
  const read = (args: string[]) =>
    git.run(dir, args).then(
      (out) => out.trim(),
      () => undefined,
    );
  const [commit, prefix, status] = await Promise.all([
    read(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']),
    read(['rev-parse', '--show-prefix']),
    read(['status', '--porcelain', '--untracked-files=all', '--', '.']),
  ]);
  if (!commit || prefix === undefined || status === undefined) return undefined;
  return { commit, path: prefix.replace(/\/$/, ''), dirty: status !== '' };
}

/** The commit `rev` names in the working copy `dir`, refused (exit 2) when it names none. */
export function resolveCommit(dir: string, rev: string, git: GitRunner = GIT_PROGRAM): string {
  if (rev.startsWith('-')) throw new GeneratorInputError(`--to ${JSON.stringify(rev)} is not a revision`);
  const commit = attempt(() => git.run(dir, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]));
  if (!commit) throw new GeneratorInputError(`${rev} names no commit of the reference ${dir}`);
  return commit;
}

/** Whether `ancestor` is a commit of `dir` and in the history of `tip` (the tip itself included). */
export function inHistoryOf(dir: string, ancestor: string, tip: string, git: GitRunner = GIT_PROGRAM): boolean {
  if (!/^[0-9a-f]{40,64}$/.test(ancestor)) return false;
  return attempt(() => git.run(dir, ['merge-base', '--is-ancestor', ancestor, tip])) !== undefined;
}

/** How many commits `tip` has that `from` has not (`git rev-list --count from..tip`). */
export function commitsBetween(dir: string, from: string, tip: string, git: GitRunner = GIT_PROGRAM): number {
  return Number(git.run(dir, ['rev-list', '--count', `${from}..${tip}`]).trim());
}

/**
 * Writes the files of folder `path` of `commit` into the empty folder `dest`, after checking the
 * folder's size against the limits (a file over MAX_REPO_FILE_BYTES is refused by name, as a read of the
 * reference is). A temporary index under `scratch` is used, so the working copy's own stays untouched.
 */
export function extractCommitFolder(
  dir: string,
  commit: string,
  path: string,
  dest: string,
  scratch: string,
  limits: RepoLimits,
  git: GitRunner = GIT_PROGRAM,
): void {
  const tree = path === '' ? commit : `${commit}:${path}`;
  checkTreeSize(dir, tree, limits, git);
  const env = { GIT_INDEX_FILE: join(scratch, 'index') };
  mkdirSync(dest, { recursive: true });
  git.run(dir, ['read-tree', tree], env);
  git.run(dir, ['checkout-index', '--all', '--force', `--prefix=${dest}/`], env);
}

/** Refuses a tree whose blobs pass a limit, before any of it is written. */
function checkTreeSize(dir: string, tree: string, limits: RepoLimits, git: GitRunner) {
  const listing = attempt(() => git.run(dir, ['ls-tree', '-r', '-l', '-z', tree]));
  if (listing === undefined) throw new GeneratorInputError(`the reference has no folder ${tree}`);
  const size = { bytes: 0, files: 0 };
  for (const entry of listing.split('\0').filter(Boolean)) {
    const [meta, file] = entry.split('\t');
    const bytes = Number(meta.trim().split(/\s+/)[3]) || 0; // "-" for a submodule
    if (bytes > limits.maxFileBytes)
      throw new GeneratorInputError(
        `${file} of the reference is larger than ${limits.maxFileBytes} bytes, the limit MAX_REPO_FILE_BYTES sets for a file of a repository; refusing to read it`,
      );
    size.bytes += bytes;
    size.files += 1;
  }
  const problem = checkoutLimitProblem(size, limits);
  if (problem) throw new GeneratorInputError(`the reference at ${tree}: ${problem}; refusing to read it`);
}
