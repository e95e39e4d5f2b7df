import type { RegistryCredentials } from '#libs/generator';
import type { GitIdentity } from '#libs/git';
import type { RepoLimits } from '#libs/runtime';

/** What the step handlers need from configuration (filled from the environment by the app and the runner). */
export interface StepSettings {
  workDir: string;
  templateDir?: string;
  referenceEnv: string;
  /** The kubectl every pass and preview validates with (KUBECTL). */
  kubectl?: string;
  gitIdentity: GitIdentity;
  registry?: RegistryCredentials;
  /** Per-step deadline; a step that passes it fails (retryable). */
  stepTimeoutMs: number;
  ackWaitMs: number;
  concurrency: number;
  /** At most this many pushes of one pass when other writers keep moving the branch... */
  pushAttempts: number;
  /** ...and only until this long after the clone: a rejected push is rebased and pushed again with jittered backoff until then. */
  pushDeadlineMs: number;
  /** Where the target's sealed-secrets controller is looked for, and how long to wait for it. */
  sealedSecrets: { namespace: string; names: string[] };
  sealedSecretsDeadlineMs: number;
  pollInitialMs: number;
  pollMaxMs: number;
  /** How long a merge-request run waits for a person (or the forge) to merge each pass's request. */
  mergeDeadlineMs: number;
  /** The longest pause between two reads of a merge request's state (MERGE_POLL_MAX_MS). */
  mergePollMaxMs: number;
  /** The console's public address (CONSOLE_URL), which a merge request's body links the run's page under. */
  consoleUrl?: string;
  /** MAX_REPO_FILE_BYTES, MAX_REPO_BYTES, MAX_REPO_FILES: how much of a tenant's repository a pass or preview takes in. */
  repoLimits?: RepoLimits;
}
