/**
 * An environment (a cluster folder on a branch of a repository) as the runs that made it show it: every run of
 * the same cluster, branch and repository (however its URL is spelt) that pushed a pass or is still active.
 * Pure: the queries read the runs, this folds them into what the API answers.
 */
import { createHash } from 'node:crypto';
import { repositoryIdentity, withoutCredentials } from '#libs/git/repository-url';
import { ACTIVE_STATUSES } from '#libs/run-decider';
import type { EnvironmentRun } from '../projection/run-read-model';
import type { EnvironmentView } from '../common/api-shapes';

export type { EnvironmentRun };

/** What the reference's history says of a recorded commit (filled in by the queries; null where unknown). */
export interface ReferenceDistance {
  newest: string | null;
  commitsBehind: number | null;
}

/** An environment's id: stable for its repository, branch and cluster folder, whichever run or URL spelling made it. */
export function environmentId(repoUrl: string, branch: string, clusterName: string): string {
  return createHash('sha256')
    .update([repositoryIdentity(repoUrl), branch, clusterName].join('\0'))
    .digest('hex')
    .slice(0, 32);
}

/** The runs of each environment, oldest first, in the order of each environment's first run. */
export function groupByEnvironment(runs: readonly EnvironmentRun[]): Map<string, EnvironmentRun[]> {
  const groups = new Map<string, EnvironmentRun[]>();
  for (const run of runs) {
    const r = run.state.request;
    const id = environmentId(r.repo_url, r.branch, r.cluster_name);
    groups.set(id, [...(groups.get(id) ?? []), run]);
  }
  return groups;
}

/** The key owning the folder: the first run's folder owner (an admin acting for it records cluster_owner). */
const folderOwner = (run: EnvironmentRun) => run.state.request.cluster_owner ?? run.state.request.requested_by;
export const ownerOfEnvironment = (runs: readonly EnvironmentRun[]): string => folderOwner(runs[0]);

/**
 * `changing` while a run of it is active; `live` once a run succeeded (both passes on the branch); `incomplete` when
 * runs pushed a pass but none finished (the infrastructure without the rest).
 */
function statusOf(runs: readonly EnvironmentRun[]): EnvironmentView['status'] {
  if (runs.some((r) => (ACTIVE_STATUSES as readonly string[]).includes(r.state.status))) return 'changing';
  return runs.some((r) => r.state.status === 'succeeded') ? 'live' : 'incomplete';
}

/** The newest run that recorded where the reference stood. */
const referenceOf = (runs: readonly EnvironmentRun[]) =>
  [...runs].reverse().find((r) => r.state.reference)?.state.reference;

/** The environment as both APIs answer it. */
export function toEnvironmentView(
  id: string,
  runs: readonly EnvironmentRun[],
  distance: ReferenceDistance,
): EnvironmentView {
  const latest = runs[runs.length - 1];
  const request = latest.state.request;
  const succeeded = runs.filter((r) => r.state.status === 'succeeded');
  const lastGood = succeeded[succeeded.length - 1];
  const reference = referenceOf(runs);
  return {
    id,
    cluster_name: request.cluster_name,
    domain: request.domain,
    region: request.region,
    gitops_path: latest.state.gitopsPath ?? `clusters/${request.cluster_name}`,
    repo_url: withoutCredentials(request.repo_url),
    branch: request.branch,
    owner: ownerOfEnvironment(runs),
    status: statusOf(runs),
    runs: runs.length,
    first_scaffolded_at: succeeded[0]?.state.finishedAt ?? null,
    updated_at: latest.state.updatedAt,
    last_run: { id: latest.id, status: latest.state.status, finished_at: latest.state.finishedAt },
    infra_commit: (lastGood ?? latest).state.infraCommit,
    full_commit: lastGood?.state.fullCommit ?? null,
    reference_commit: reference?.commit ?? null,
    reference_dirty: reference?.dirty ?? false,
    reference_newest: distance.newest,
    commits_behind: distance.commitsBehind,
  };
}
