import type { EventDraft } from '#libs/events';
import type { StepHandler } from '#libs/steps';

/** The test plan's extra step: here it finds the infrastructure Ready at once and says so. */
export const fluxReadyWait: StepHandler<'flux-ready-wait'> = {
  step: 'flux-ready-wait',
  async run(ctx) {
    const commit = (ctx.state.infraCommit ?? '').slice(0, 12);
    await ctx.log.line(`Flux reports the infrastructure Ready at ${commit}`);
    return {
      type: 'StepCompleted',
      data: { step: 'flux-ready-wait', summary: `Kustomization infrastructure Ready at ${commit}` },
    } as unknown as EventDraft;
  },
};
