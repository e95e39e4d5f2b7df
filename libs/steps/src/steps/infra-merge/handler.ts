/**
 * The wait for the infrastructure's merge request: only once it is merged does Flux apply the infrastructure, so
 * only then is the new cluster's sealed-secrets controller worth waiting for.
 */
import { planStep, RUN_PLANS } from '#libs/events';
import type { StepHandler } from '../../handler/step-handler';
import { waitForMerge } from '../../pass/merge-requests';

const REPORT_EVERY_MS = planStep(RUN_PLANS['scaffold-mr'], 'infra-merge')!.progress!.reportEveryMs;

export const infraMerge: StepHandler<'infra-merge'> = {
  step: 'infra-merge',
  run: (ctx) => waitForMerge(ctx, 'infra-merge', 'infra', REPORT_EVERY_MS),
};
