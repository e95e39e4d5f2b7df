/** The infrastructure pass as a merge request: pushed to a branch of its own and proposed into the branch Flux reads. */
import type { StepHandler } from '../../handler/step-handler';
import { requestPass } from '../../pass/request-pass';

export const infraRequest: StepHandler<'infra-request'> = {
  step: 'infra-request',
  run: (ctx) => requestPass(ctx, 'infra-request', 'infra'),
};
