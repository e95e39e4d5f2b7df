/**
 * The reference's git history as the environments API asks it: its newest commit, and how many commits an
 * environment's recorded commit is behind it. Behind a small interface, so tests and other transports can stand in.
 */
import { GIT_PROGRAM_ASYNC, type AsyncGitRunner } from '#libs/generator/reference-git';

export interface ReferenceHistory {
  /** The reference's newest commit (its HEAD), or undefined when it is no git working copy. */
  newest(): Promise<string | undefined>;
  /** Commits `tip` has that `from` has not; undefined when `from` is no commit in `tip`'s history (a rewritten history). */
  behind(from: string, tip: string): Promise<number | undefined>;
}

export const REFERENCE_HISTORY = Symbol('REFERENCE_HISTORY');

/** How long the newest commit is taken as known: a listing asks once, not once per environment or per GET. */
const NEWEST_KEPT_MS = 5000;
/** Distances kept (commits never change, so a distance between two never does). */
const DISTANCES_KEPT = 1024;
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The history of the reference folder `dir` (TEMPLATE_DIR, or the shipped template), read with the git program. */
export class GitReferenceHistory implements ReferenceHistory {
  private newestRead: { at: number; commit: Promise<string | undefined> } | undefined;
  /** Distances by `from..tip`, kept as the read in flight too: a page of environments made from one commit reads it once. */
  private readonly distances = new Map<string, Promise<number | undefined>>();

  constructor(
    private readonly dir: string,
    private readonly git: AsyncGitRunner = GIT_PROGRAM_ASYNC,
    private readonly now: () => number = Date.now,
  ) {}

  newest(): Promise<string | undefined> {
    if (!this.newestRead || this.now() - this.newestRead.at > NEWEST_KEPT_MS)
      this.newestRead = { at: this.now(), commit: this.read(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']) };
    return this.newestRead.commit;
  }

  behind(from: string, tip: string): Promise<number | undefined> {
    // Recorded commits come from validated events; anything else is never handed to git.
    if (!COMMIT.test(from) || !COMMIT.test(tip)) return Promise.resolve(undefined);
    const key = `${from}..${tip}`;
    const known = this.distances.get(key);
    if (known) return known;
    const distance = this.count(from, tip, key);
    if (this.distances.size >= DISTANCES_KEPT) this.distances.delete(this.distances.keys().next().value!);
    this.distances.set(key, distance);
    return distance;
  }

  private async count(from: string, tip: string, range: string): Promise<number | undefined> {
    const inHistory = (await this.read(['merge-base', '--is-ancestor', from, tip])) !== undefined;
    const count = inHistory ? Number(await this.read(['rev-list', '--count', range])) : undefined;
    return count === undefined || Number.isNaN(count) ? undefined : count;
  }

  /** git's trimmed answer, or undefined when it fails (no working copy, an unknown commit). */
  private read(args: string[]): Promise<string | undefined> {
    return this.git.run(this.dir, args).then(
      (out) => out.trim(),
      () => undefined,
    );
  }
}
