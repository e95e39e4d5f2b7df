/** The wait for the new cluster's sealed-secrets controller (skipped by SOPS runs, which have none). */
import { planStep, RUN_PLANS } from '#libs/events';
import type { StepHandler } from '../../handler/step-handler';
import { clusterTarget, storedCertificate } from '../../target/run-target';

/** How often the wait reports what it sees when nothing changes (its plan's progress settings). */
const WAIT_PROGRESS = planStep(RUN_PLANS.scaffold, 'sealed-secrets-wait')!.progress!;

/**
 * Waits until the target's sealed-secrets controller is Available. With a certificate given in the
 * request there is nothing to wait for once the certificate checks out.
 */
export const sealedSecretsWait: StepHandler<'sealed-secrets-wait'> = {
  step: 'sealed-secrets-wait',
  async run(ctx) {
    const cluster = clusterTarget(ctx);
    if (!cluster) {
      await storedCertificate(ctx);
      return { type: 'SealedSecretsReady', data: { source: 'given_certificate', controller: null } };
    }
    let lastSeen = '';
    let lastReport = -Infinity;
    const deadlineMs = ctx.settings.sealedSecretsDeadlineMs;
    const controller = await cluster.targets.waitForSealedSecrets(cluster.ref, async (seen, waitedMs) => {
      if (seen === lastSeen && waitedMs - lastReport < WAIT_PROGRESS.reportEveryMs) return;
      await ctx.log.line(
        `waiting for sealed-secrets (${Math.round(waitedMs / 1000)} s of ${Math.round(deadlineMs / 1000)} s): ${seen}`,
      );
      await ctx.commands.handle(ctx.runId, {
        type: 'ReportProgress',
        step: 'sealed-secrets-wait',
        waitedMs,
        deadlineMs,
        seen,
      });
      lastSeen = seen;
      lastReport = waitedMs;
    });
    await ctx.log.line(`sealed-secrets controller ${controller.namespace}/${controller.name} is Available`);
    return { type: 'SealedSecretsReady', data: { source: 'cluster', controller } };
  },
};
