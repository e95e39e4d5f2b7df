import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
  /**
   * Keeps a working copy, at a commit of its branch, for the next piece of work of the same `key` in
   * this process (the full pass after the infra pass of a run) instead of removing it; removed when
   * nobody takes it within a while. A copy kept before under the key is removed.
   */
  handOver(key: string, ws: GitWorkspace): Promise<void>;
  /**
   * The working copy kept under `key`, when it is of `repo`, holds exactly its commit and the remote
   * branch is still there; otherwise none (and a copy that was kept is removed).
   */
  takeOver(key: string, repo: RepoRef, signal?: AbortSignal): Promise<GitWorkspace | null>;
  /**
   * A message as a tenant may read it: a file of a working copy named by its path in the repository,
   * any other path of these working copies or of the temporary folder by a placeholder (never the
   * service's folders).
   */
  withoutLocalPaths(text: string): string;
}

/** What a clone needs besides its repository: made once per process by the service's git module. */
export interface CloneSettings {
  gitIdentity: GitIdentity;
  gitAccess: GitAccess;
  repoCache?: RepositoryCache;
}

/** How long a handed-over working copy waits for its taker (the sealed-secrets wait lies between the passes). */
const HANDOVER_MS = 10 * 60_000;
/** At most this many handed-over copies at once (each a checkout on disk); the oldest goes first. */
const HANDOVER_LIMIT = 16;

/** Scratch clones in folders of their own under `root`, one per piece of work, so concurrent ones never meet. */
export class LocalGitWorkspaces implements GitWorkspaces {
  private readonly handedOver = new Map<string, { ws: GitWorkspace; timer: NodeJS.Timeout }>();

  constructor(
    private readonly root: string,
    private readonly settings: CloneSettings,
    private readonly handOverMs = HANDOVER_MS,
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

  async handOver(key: string, ws: GitWorkspace): Promise<void> {
    await this.drop(key);
    while (this.handedOver.size >= HANDOVER_LIMIT) await this.drop(this.handedOver.keys().next().value!);
    // unref: a copy nobody takes never holds the process (a runner Job) open.
    const timer = setTimeout(() => void this.drop(key), this.handOverMs).unref();
    this.handedOver.set(key, { ws, timer });
  }

  async takeOver(key: string, repo: RepoRef, signal?: AbortSignal): Promise<GitWorkspace | null> {
    const kept = this.handedOver.get(key);
    if (!kept) return null;
    this.handedOver.delete(key);
    clearTimeout(kept.timer);
    const { ws } = kept;
    const sameBranch = ws.repo.url === repo.url && ws.repo.branch === repo.branch;
    // Any doubt (the remote unreachable, git failing) is a fresh clone's to report, not this shortcut's.
    const usable = sameBranch && !signal?.aborted && (await this.unmoved(ws).catch(() => false));
    if (usable) return ws;
    await ws.remove();
    return null;
  }

  withoutLocalPaths(text: string): string {
    return withoutWorkingCopyPaths(text, this.root);
  }

  /** The copy holds exactly its commit, and that is still the remote branch's head. */
  private async unmoved(ws: GitWorkspace): Promise<boolean> {
    const [clean, head, remote] = await Promise.all([ws.isClean(), ws.head(), ws.remoteHead()]);
    return clean && head === remote;
  }

  private async drop(key: string): Promise<void> {
    const kept = this.handedOver.get(key);
    if (!kept) return;
    this.handedOver.delete(key);
    clearTimeout(kept.timer);
    await kept.ws.remove().catch(() => undefined);
  }
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `text` with the paths of working copies under `root` made paths in their repository (a working copy
 * is two folders down: `<run>/<pass-attempt>`, or `<id>/repo` for a scratch clone), and any other path
 * under `root` or the temporary folder (where builds are assembled) replaced by a placeholder.
 */
export function withoutWorkingCopyPaths(text: string, root: string): string {
  let out = text;
  for (const dir of new Set([root, realpathOr(root), tmpdir(), realpathOr(tmpdir())].filter((d) => d.length > 1))) {
    const base = escaped(dir.replace(/\/+$/, ''));
    out = out
      .replace(new RegExp(`${base}/[^/\\s'"\`]+/[^/\\s'"\`]+/`, 'g'), '')
      .replace(new RegExp(`${base}(/[^\\s'"\`)\\],;]*)?`, 'g'), '(a working folder of the service)');
  }
  return out;
}

function realpathOr(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}
