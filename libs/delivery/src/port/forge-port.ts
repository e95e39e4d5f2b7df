/**
 * The delivery port: what the service asks of a forge (GitHub, GitLab, Gitea/Forgejo) to deliver a change as
 * a merge request instead of a direct push. The branch itself is pushed with git (the service's git access,
 * egress rules and credentials); the forge is asked only about the request. One adapter per forge implements
 * this interface; the run's steps see nothing else.
 */

/** The forges an adapter exists for. */
export const FORGE_KINDS = ['github', 'gitlab', 'gitea'] as const;
export type ForgeKind = (typeof FORGE_KINDS)[number];

/** How a change reaches the branch Flux reads. */
export type DeliveryMode = 'push' | 'merge_request';

/** A repository as its forge's API names it. */
export interface ForgeRepository {
  /** The API's base URL (https://api.github.com, https://gitlab.example/api/v4, https://gitea.example/api/v1). */
  apiUrl: string;
  /** owner/name (GitHub, Gitea) or the full namespace path (GitLab: group/subgroup/name). */
  path: string;
}

/** What the service asks to be opened, or brought up to date when it is open already. */
export interface MergeRequestSpec {
  repository: ForgeRepository;
  /** The branch holding the change (`scaffolder/<cluster>/<operation>/<short commit or run>`), pushed before. */
  head: string;
  /** The branch Flux reads. */
  base: string;
  title: string;
  /** The plan of the change (the dry run's text), the run's id and a link to its console page. */
  body: string;
  labels: readonly string[];
  /** Ask the forge to merge once its checks pass, where it can and the settings allow. */
  autoMerge: boolean;
  /**
   * The commit the service pushed to `head`. With it, auto-merge is asked to merge that commit only (GitHub
   * `expectedHeadOid`, GitLab `sha`, Gitea `head_commit_id`): a branch edited since is never merged unseen.
   */
  headSha?: string;
}

export type MergeRequestState = 'open' | 'merged' | 'closed';

/** A request as the forge reports it. */
export interface MergeRequest {
  /** The number people see (GitHub/Gitea number, GitLab iid). */
  number: number;
  /** The page a person opens. */
  url: string;
  state: MergeRequestState;
  head: string;
  base: string;
  /** The commit the request's head branch points at now: a different one than the service pushed means edited. */
  headSha: string;
  /** The commit the merge made on the base branch, once merged. */
  mergeCommitSha?: string;
}

/**
 * One forge. Every method is idempotent for the same arguments; errors are `ForgeError`s whose messages carry
 * no credential. A retried step calls `findMergeRequest` before `openMergeRequest`.
 */
export interface ForgePort {
  readonly kind: ForgeKind;
  /** The newest request from `head` into `base` in any state, or null when there is none. */
  findMergeRequest(repository: ForgeRepository, head: string, base: string): Promise<MergeRequest | null>;
  /** Opens the request (or, when the forge answers that one exists, returns that one) with its labels. */
  openMergeRequest(spec: MergeRequestSpec): Promise<MergeRequest>;
  /** Brings an open request's title, body and labels up to date. */
  updateMergeRequest(spec: MergeRequestSpec, number: number): Promise<MergeRequest>;
  /** The request's current state. */
  readMergeRequest(repository: ForgeRepository, number: number): Promise<MergeRequest>;
  /** Closes an open request (a run cancelled or superseded); closing a closed one is a no-op. */
  closeMergeRequest(repository: ForgeRepository, number: number): Promise<void>;
}

/** Why a forge call failed, without the token or the request's headers. */
export class ForgeError extends Error {
  constructor(
    message: string,
    /** The HTTP status, when the forge answered. */
    readonly status?: number,
    /** Worth retrying (rate limit, 5xx, network), with the forge's wait when it said one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ForgeError';
  }

  /** Whether the same call may succeed later (rate limit, 5xx, network): a wait of 0 means the forge named none. */
  get retryable(): boolean {
    return this.retryAfterMs !== undefined;
  }
}

/** What a request may say about its forge (`delivery.forge`, `delivery.api_url`); the settings fill the rest. */
export interface RequestedForge {
  forge?: ForgeKind;
  apiUrl?: string;
}

/**
 * Which forge serves a repository and as which API repository, from the settings (`FORGE_*`, per repository
 * prefix, with the token read like git's credentials). Null when none is configured for the URL: a
 * `merge_request` delivery is then refused naming `delivery.forge`.
 */
export interface ForgeResolver {
  forgeFor(
    repoUrl: string,
    requested?: RequestedForge,
  ): {
    port: ForgePort;
    repository: ForgeRepository;
    /** Whether the settings let requests of this repository ask for auto-merge (absent: they do not). */
    autoMerge?: boolean;
  } | null;
}
