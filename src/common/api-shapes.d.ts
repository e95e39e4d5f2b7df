/**
 * The shapes the REST API answers that more than the service reads: the console's browser code
 * (src/console/ui, built with its own tsconfig and the DOM library) imports these types too. A
 * declaration file with no imports, so both builds can share it and neither emits it.
 */

/** The run as both APIs return it (snake_case, as the controller expects). */
export interface RunView {
  id: string;
  /** The key that created the run (requested_by): what the console shows admins in its owner column. */
  owner: string;
  status: string;
  step: string | null;
  message: string;
  cluster_name: string;
  domain: string;
  region: string;
  gitops_path: string;
  repo_url: string;
  branch: string;
  infra_commit: string | null;
  full_commit: string | null;
  created_at: string | null;
  updated_at: string | null;
  finished_at: string | null;
  /** For the long wait: how long it has waited and its deadline. */
  progress: { waited_seconds: number; deadline_seconds: number } | null;
  /** While the status is retrying: the step, the attempt that failed and why. */
  retry: { step: string; failed_attempt: number; reason: string } | null;
  /** How the passes reach the branch: pushed to it, or proposed as merge requests. */
  delivery: 'push' | 'merge_request';
  /** The merge requests the run opened (one per pass that changed something), with their state as last seen. */
  merge_requests: MergeRequestView[];
}

/**
 * An environment (a cluster folder on a branch of a repository) as both APIs return it: what made it and how far its
 * reference has moved since.
 */
export interface EnvironmentView extends Pick<
  RunView,
  'cluster_name' | 'domain' | 'region' | 'gitops_path' | 'repo_url' | 'branch'
> {
  /** Stable for the repository, branch and cluster folder (however the repository's URL is spelt). */
  id: string;
  /** The key owning the cluster folder. */
  owner: string;
  /** changing: a run of it is active; live: a run succeeded; incomplete: runs pushed a pass, none finished. */
  status: 'changing' | 'live' | 'incomplete';
  /** Runs of this environment that pushed a pass or are active. */
  runs: number;
  first_scaffolded_at: string | null;
  updated_at: string | null;
  last_run: { id: string; status: string; finished_at: string | null };
  /** The branch's commits of the newest successful run (infra: of the newest run that pushed one, when none succeeded). */
  infra_commit: string | null;
  full_commit: string | null;
  /** The reference commit the newest pass generated from (null: the reference is no git working copy, or older runs). */
  reference_commit: string | null;
  /** The reference's files differed from reference_commit then: that commit alone does not make the environment again. */
  reference_dirty: boolean;
  /** The reference's newest commit now (its HEAD), when the reference is a git working copy. */
  reference_newest: string | null;
  /** Commits reference_newest has that reference_commit has not (null: either unknown, or no longer in its history). */
  commits_behind: number | null;
}

/** A run's merge request: where a person finds it and what became of it. */
export interface MergeRequestView {
  pass: 'infra' | 'full';
  number: number;
  url: string;
  head: string;
  base: string;
  state: 'open' | 'merged' | 'closed';
  /** Its branch had changes pushed to it after the run pushed it (seen when it was merged). */
  edited: boolean;
}

/** An event as GET /api/v1/scaffolds/{id}/events, the SSE route and the audit feed (with run_id) show it. */
export interface EventView {
  seq: number;
  id: string;
  run_id?: string;
  type: string;
  schema_version: number;
  time: string;
  causation_id: string | null;
  data: Record<string, unknown>;
}

/** GET /api/v1/whoami. */
export interface CallerView {
  name: string;
  role: 'admin' | 'operator' | 'reader';
}

/** One key of GET /api/v1/scaffolds/{id}/credential-plan: where it lives and how a pass fills it, never its value. */
export interface CredentialPlanItem {
  namespace: string;
  name: string;
  key: string;
  class: 'generated' | 'derived' | 'supplied' | 'configuration' | 'registry' | 'external';
}

/** A page of a list route. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
