/** The full pass as a merge request: sealed for the new cluster (or SOPS-encrypted) and proposed like the infrastructure. */
import { requestOf, StepHandler } from '../../handler/step-handler';
import { requestPass } from '../../pass/request-pass';
import { storedCertificate } from '../../target/run-target';

export const fullRequest: StepHandler<'full-request'> = {
  step: 'full-request',
  async run(ctx) {
    const sops = requestOf(ctx).target.kind === 'age_recipients';
    const certPem = sops ? undefined : (await storedCertificate(ctx)).pem;
    return requestPass(ctx, 'full-request', 'full', certPem);
  },
};
