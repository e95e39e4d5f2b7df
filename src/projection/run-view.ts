import { withoutCredentials } from '../../libs/git/src/repository-url';
import type { RunState } from '../../libs/run-decider/src';

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
}

export function toView(id: string, s: RunState): RunView {
  const r = s.request!;
  return {
    id,
    owner: r.requested_by,
    status: s.status,
    step: s.step,
    message: s.message,
    cluster_name: r.cluster_name,
    domain: r.domain,
    region: r.region,
    gitops_path: `clusters/${r.cluster_name}`,
    repo_url: withoutCredentials(r.repo_url),
    branch: r.branch,
    infra_commit: s.infraCommit,
    full_commit: s.fullCommit,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    finished_at: s.finishedAt,
    progress: s.progress
      ? {
          waited_seconds: Math.round(s.progress.waitedMs / 1000),
          deadline_seconds: Math.round(s.progress.deadlineMs / 1000),
        }
      : null,
    retry: s.retry ? { step: s.retry.step, failed_attempt: s.retry.attempt, reason: s.retry.reason } : null,
  };
}
