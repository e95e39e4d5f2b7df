/** The infrastructure pass: flux-system and the infrastructure pushed first, with no secret of any kind. */
import type { StepHandler } from '../../handler/step-handler';
import { pushPass } from '../../pass/push-pass';

export const infraPass: StepHandler<'infra-pass'> = {
  step: 'infra-pass',
  async run(ctx) {
    const { commit, files, unchanged, reference } = await pushPass(ctx, 'infra');
    return {
      type: 'InfraPushed',
      data: { commit, files_changed: files, ...(unchanged ? { unchanged } : {}), ...reference },
    };
  },
};
