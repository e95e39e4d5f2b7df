import { defineRunPlan } from './run-plan';

/** The wait for the new cluster's sealed-secrets controller (every scaffold plan has it, after the infrastructure). */
export const SEALED_SECRETS_WAIT = {
  name: 'sealed-secrets-wait',
  title: 'the wait for sealed-secrets',
  result: 'SealedSecretsReady',
  skippedFor: ['age_recipients'],
  deadline: { setting: 'sealedSecretsDeadlineMs', graceMs: 60_000 },
  progress: { reportEveryMs: 60_000, pollSetting: 'SEALED_SECRETS_POLL_MAX_MS', slackMs: 30_000 },
  runner: { progress: true, writesInputs: [] },
} as const;

/** The fetch of its certificate through the Kubernetes API, which the full pass seals with. */
export const CERT_FETCH = {
  name: 'cert-fetch',
  title: 'the certificate fetch',
  result: 'CertFetched',
  skippedFor: ['age_recipients'],
  runner: { progress: false, writesInputs: ['sealing-cert'] },
} as const;

/**
 * A scaffold run, version 1: infrastructure first (no secret of any kind), then, once the new cluster's
 * sealed-secrets controller is up and its certificate was fetched, everything else. SOPS runs (age recipients)
 * have no controller to wait for and no certificate to fetch: they go from the infrastructure to the full pass.
 */
export const SCAFFOLD_V1 = defineRunPlan({
  kind: 'scaffold',
  version: 1,
  start: 'ScaffoldRequested',
  steps: [
    {
      name: 'infra-pass',
      title: 'the infrastructure pass',
      result: 'InfraPushed',
      runner: { progress: false, writesInputs: [] },
    },
    SEALED_SECRETS_WAIT,
    CERT_FETCH,
    {
      name: 'full-pass',
      title: 'the full pass',
      result: 'FullPushed',
      runner: { progress: false, writesInputs: [] },
    },
  ],
});
