/** The wait for the full pass's merge request: the run's last step, its success once the request is merged. */
import { planStep, RUN_PLANS } from '#libs/events';
import type { StepHandler } from '../../handler/step-handler';
import { waitForMerge } from '../../pass/merge-requests';

const REPORT_EVERY_MS = planStep(RUN_PLANS['scaffold-mr'], 'full-merge')!.progress!.reportEveryMs;

export const fullMerge: StepHandler<'full-merge'> = {
  step: 'full-merge',
  run: (ctx) => waitForMerge(ctx, 'full-merge', 'full', REPORT_EVERY_MS),
};
