import { defineRunPlan } from './run-plan';
import { CERT_FETCH, SEALED_SECRETS_WAIT } from './scaffold-v1-plan';

/** How a merge wait reports: at least every minute, polling the forge at most MERGE_POLL_MAX_MS apart. */
const MERGE_WAIT = {
  result: 'MergeRequestMerged',
  failsWith: 'MergeRequestClosed',
  deadline: { setting: 'mergeDeadlineMs', graceMs: 60_000 },
  progress: { reportEveryMs: 60_000, pollSetting: 'MERGE_POLL_MAX_MS', slackMs: 30_000 },
  runner: { progress: true, writesInputs: [] },
} as const;

/**
 * A scaffold delivered as merge requests, version 1: the same two passes in the same order as the push plan
 * (scaffold-v1-plan.ts), each pushed to a branch of its own with a merge request into the branch Flux reads, and
 * the run waits for each to be merged. The infrastructure's request is merged before the run waits for the new
 * cluster's sealed-secrets controller (Flux applies nothing from a branch it does not read); a request closed
 * unmerged fails the run. SOPS runs skip the controller and the certificate as in the push plan.
 */
export const SCAFFOLD_MR_V1 = defineRunPlan({
  kind: 'scaffold-mr',
  version: 1,
  start: 'ScaffoldRequested',
  steps: [
    {
      name: 'infra-request',
      title: "the infrastructure pass's merge request",
      result: 'MergeRequestOpened',
      runner: { progress: false, writesInputs: [] },
    },
    { name: 'infra-merge', title: "the wait for the infrastructure's merge", ...MERGE_WAIT },
    SEALED_SECRETS_WAIT,
    CERT_FETCH,
    {
      name: 'full-request',
      title: "the full pass's merge request",
      result: 'MergeRequestOpened',
      runner: { progress: false, writesInputs: [] },
    },
    { name: 'full-merge', title: "the wait for the full pass's merge", ...MERGE_WAIT },
  ],
});
