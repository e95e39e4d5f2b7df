import { withoutCredentials } from '#libs/git/repository-url';
import type { RunState } from '#libs/run-decider';
import type { RunView } from '../common/api-shapes';

export type { RunView } from '../common/api-shapes';

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
    gitops_path: s.gitopsPath ?? `clusters/${r.cluster_name}`,
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
    delivery: r.delivery?.mode ?? 'push',
    merge_requests: (s.mergeRequests ?? []).map((m) => ({
      pass: m.pass,
      number: m.number,
      url: m.url,
      head: m.head,
      base: m.base,
      state: m.state,
      edited: m.edited === true,
    })),
  };
}
