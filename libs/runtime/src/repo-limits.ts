/**
 * How much of a tenant's repository the service takes in. A repository is the tenant's code: a link to
 * /dev/zero, a file that packs to kilobytes and checks out to gigabytes, a million small files. Each
 * limit is named by its setting in a refusal, so the tenant (or the operator) knows which one to change.
 */
export interface RepoLimits {
  /** MAX_REPO_FILE_BYTES: the largest single file read from a working copy or the reference. */
  maxFileBytes: number;
  /** MAX_REPO_BYTES: the most bytes a checkout may hold, unpacked (what git writes to disk). */
  maxRepoBytes: number;
  /** MAX_REPO_FILES: the most files (and links) a checkout may hold. */
  maxRepoFiles: number;
}

const MiB = 1024 * 1024;

/**
 * 5 MiB per file: Flux's own limit on a decrypted file, and above the largest file a fleet commits (flux
 * bootstrap's gotk-components.yaml, under 1 MB); the shipped references' largest manifest is 1.9 KB.
 * 256 MiB and 20,000 files per checkout: 200 copies of the shipped reference's cluster hold 4,040 files and
 * 6.9 MB, so a repository past either is not a fleet repository the service was made for.
 */
export const DEFAULT_REPO_LIMITS: RepoLimits = {
  maxFileBytes: 5 * MiB,
  maxRepoBytes: 256 * MiB,
  maxRepoFiles: 20_000,
};

/** What a checkout holds: its files' bytes (unpacked) and their number. */
export interface CheckoutSize {
  bytes: number;
  files: number;
}

/** Why a checkout of this size is refused, naming the limit it passes; null when it is within both. */
export function checkoutLimitProblem(size: CheckoutSize, limits: RepoLimits): string | null {
  if (size.files > limits.maxRepoFiles)
    return `the repository holds more than ${limits.maxRepoFiles} files, the limit MAX_REPO_FILES sets`;
  if (size.bytes > limits.maxRepoBytes)
    return `the repository holds more than ${limits.maxRepoBytes} bytes unpacked, the limit MAX_REPO_BYTES sets`;
  return null;
}
