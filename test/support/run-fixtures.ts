import type { EventDraft, ScaffoldRequestedData, Step } from '#libs/events';

/** A run's request as ScaffoldRequested records it: the given of unit tests on the decider, the stores and the processors. */
export const SCAFFOLD_REQUEST: ScaffoldRequestedData = {
  cluster_name: 'c1',
  domain: 'c1.example.com',
  region: 'eu-west-1',
  acme_email: 'ops@example.com',
  repo_url: 'https://git.example.com/fleet.git',
  branch: 'main',
  target: { kind: 'sealing_cert', fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00.000Z' },
  requested_by: 'default',
};

/** A merge request of run c1's pass as its events name it. */
function mergeRequest(number: number, pass: string) {
  return {
    number,
    url: `https://git.example.com/fleet/pulls/${number}`,
    head: `scaffolder/c1/${pass}/run1`,
    base: 'main',
  };
}

/** What each step of the scaffold plans appends when it succeeds: the decider specs' givens. */
export const STEP_RESULTS: Readonly<Record<Step, EventDraft>> = {
  'infra-pass': { type: 'InfraPushed', data: { commit: 'a'.repeat(40), files_changed: 3 } },
  'sealed-secrets-wait': { type: 'SealedSecretsReady', data: { source: 'given_certificate', controller: null } },
  'cert-fetch': { type: 'CertFetched', data: { fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00.000Z' } },
  'full-pass': { type: 'FullPushed', data: { commit: 'b'.repeat(40), objects_sealed: 3 } },
  'infra-request': {
    type: 'MergeRequestOpened',
    data: {
      step: 'infra-request',
      pass: 'infra',
      commit: 'c'.repeat(40),
      files_changed: 3,
      objects_sealed: 0,
      request: mergeRequest(1, 'infra'),
    },
  },
  'infra-merge': {
    type: 'MergeRequestMerged',
    data: { step: 'infra-merge', pass: 'infra', merge_commit: 'a'.repeat(40), request: mergeRequest(1, 'infra') },
  },
  'full-request': {
    type: 'MergeRequestOpened',
    data: {
      step: 'full-request',
      pass: 'full',
      commit: 'd'.repeat(40),
      files_changed: 5,
      objects_sealed: 3,
      request: mergeRequest(2, 'full'),
    },
  },
  'full-merge': {
    type: 'MergeRequestMerged',
    data: { step: 'full-merge', pass: 'full', merge_commit: 'b'.repeat(40), request: mergeRequest(2, 'full') },
  },
};

/** A create request body as the REST and NATS APIs take it. */
export const createBody = (cluster: string, repoUrl: string, certPem: string) => ({
  cluster_name: cluster,
  domain: `${cluster}.example.com`,
  region: 'eu-west-1',
  acme_email: 'ops@example.com',
  repo: { url: repoUrl, branch: 'main' },
  target: { sealing_cert_pem: certPem },
});

/** The events of a run that succeeded, in order, each once (StepProgress and retries aside). */
export const SUCCEEDED_RUN_EVENTS: readonly string[] = [
  'ScaffoldRequested',
  'InfraPushed',
  'SealedSecretsReady',
  'CertFetched',
  'FullPushed',
  'ScaffoldSucceeded',
];
