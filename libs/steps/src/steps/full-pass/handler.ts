/** The full pass: everything else, with fresh credentials sealed for the new cluster (or encrypted with SOPS/age). */
import { requestOf, StepHandler } from '../../handler/step-handler';
import { pushPass } from '../../pass/push-pass';
import { storedCertificate } from '../../target/run-target';

export const fullPass: StepHandler<'full-pass'> = {
  step: 'full-pass',
  async run(ctx) {
    const sops = requestOf(ctx).target.kind === 'age_recipients';
    const certPem = sops ? undefined : (await storedCertificate(ctx)).pem;
    const { commit, sealed, unchanged, reference } = await pushPass(ctx, 'full', certPem);
    return {
      type: 'FullPushed',
      data: { commit, objects_sealed: sealed, ...(unchanged ? { unchanged } : {}), ...reference },
    };
  },
};
