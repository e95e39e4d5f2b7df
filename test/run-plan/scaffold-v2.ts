import { defineRunPlan } from '#libs/events';
import { SCAFFOLD_V1 } from '#libs/events/scaffold-v1-plan';

/**
 * A test-only version 2 of the scaffold plan: one more step, a wait for the new cluster's Flux to report the
 * infrastructure commit Ready, between the certificate and the full pass (SOPS runs wait too). Adding it touched
 * this plan and the step's folder (./flux-ready-wait) and nothing else.
 */
export const SCAFFOLD_V2 = defineRunPlan({
  ...SCAFFOLD_V1,
  version: 2,
  steps: [
    ...SCAFFOLD_V1.steps.slice(0, 3),
    {
      name: 'flux-ready-wait',
      title: "the wait for the new cluster's Flux to report the infrastructure Ready",
      result: 'StepCompleted',
      progress: { reportEveryMs: 300_000, pollSetting: 'SEALED_SECRETS_POLL_MAX_MS', slackMs: 30_000 },
      runner: { progress: true, writesInputs: [] },
    },
    SCAFFOLD_V1.steps[3],
  ],
});
