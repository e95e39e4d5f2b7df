import { mkdirSync, rmSync } from 'node:fs';
import { simpleGit, SimpleGit } from 'simple-git';

/** Why a git step failed, and whether trying again can help. */
export class GitStepError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'GitStepError';
  }
}

export interface GitIdentity {
  name: string;
  email: string;
}

export interface RepoRef {
  url: string;
  branch: string;
}

/** Trailers that make a run's commit findable on the remote, so a redelivered step never pushes twice. */
export function runTrailers(runId: string, pass: string): string {
  return `Scaffold-Run: ${runId}\nScaffold-Pass: ${pass}`;
}

const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._/-]{1,200}(?<![./])$/;

export function isSafeBranch(branch: string): boolean {
  return BRANCH.test(branch) && !branch.endsWith('.lock');
}

/** Maps git's words to a reason a person can act on, and says whether a retry can help. */
export function classifyGitError(e: unknown, url: string): GitStepError {
  const text = String((e as Error)?.message ?? e);
  const redacted = text.replaceAll(url, '<repo>').replace(/\/\/[^/@\s]+@/g, '//***@');
  const first = redacted.split('\n').find((l) => /fatal|error|rejected|denied/i.test(l)) ?? redacted.split('\n')[0];
  if (/Authentication failed|Permission denied|could not read Username|403/i.test(text)) return new GitStepError(`authentication refused: ${first.trim()}`, false);
  if (/Remote branch .* not found|couldn't find remote ref/i.test(text)) return new GitStepError(`the branch does not exist on the remote: ${first.trim()}`, false);
  if (/does not appear to be a git repository|not found|No such file/i.test(text)) return new GitStepError(`repository not found: ${first.trim()}`, false);
  if (/non-fast-forward|fetch first|rejected/i.test(text)) return new GitStepError(`push rejected: ${first.trim()}`, true);
  return new GitStepError(`git failed: ${first.trim()}`, true);
}

/**
 * One working copy for one pass of one run. User strings reach git only as positional values after
 * validation (the URL scheme and branch are checked at the API edge; simple-git refuses ext:: and
 * option-like arguments).
 */
export class GitWorkspace {
  private readonly git: SimpleGit;

  private constructor(
    readonly dir: string,
    readonly repo: RepoRef,
    identity: GitIdentity,
  ) {
    this.git = simpleGit({ baseDir: dir, config: [`user.name=${identity.name}`, `user.email=${identity.email}`, 'commit.gpgsign=false'] });
  }

  static async clone(dir: string, repo: RepoRef, identity: GitIdentity): Promise<GitWorkspace> {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    try {
      await simpleGit().clone(repo.url, dir, ['--branch', repo.branch, '--single-branch', '--no-tags']);
    } catch (e) {
      throw classifyGitError(e, repo.url);
    }
    return new GitWorkspace(dir, repo, identity);
  }

  /** The commit of this run and pass already on the branch, if a previous attempt pushed it. */
  async findRunCommit(runId: string, pass: string): Promise<string | null> {
    const out = await this.git.raw(['log', '--format=%H', '--fixed-strings', '--all-match', `--grep=Scaffold-Run: ${runId}`, `--grep=Scaffold-Pass: ${pass}`, 'HEAD']);
    return out.trim().split('\n').filter(Boolean)[0] ?? null;
  }

  /** Commits exactly the given paths (an empty commit when nothing changed, so every pass leaves its trailer). */
  async commit(paths: string[], subject: string, runId: string, pass: string): Promise<string> {
    await this.git.raw(['add', '--all', '--', ...paths]);
    await this.git.raw(['commit', '--allow-empty', '--no-verify', '-m', subject, '-m', runTrailers(runId, pass)]);
    return (await this.git.revparse(['HEAD'])).trim();
  }

  async changedFiles(paths: string[]): Promise<number> {
    const out = await this.git.raw(['status', '--porcelain', '--untracked-files=all', '--', ...paths]);
    return out.split('\n').filter(Boolean).length;
  }

  async push(): Promise<void> {
    try {
      await this.git.raw(['push', '--porcelain', 'origin', `HEAD:refs/heads/${this.repo.branch}`]);
    } catch (e) {
      throw classifyGitError(e, this.repo.url);
    }
  }

  /** After a rejected push: move onto the remote's new head, dropping the local commit and files. */
  async resetToRemote(): Promise<void> {
    try {
      await this.git.raw(['fetch', '--no-tags', 'origin', `refs/heads/${this.repo.branch}:refs/remotes/origin/${this.repo.branch}`]);
      await this.git.raw(['reset', '--hard', `refs/remotes/origin/${this.repo.branch}`]);
      await this.git.raw(['clean', '-fdx']);
    } catch (e) {
      throw classifyGitError(e, this.repo.url);
    }
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
