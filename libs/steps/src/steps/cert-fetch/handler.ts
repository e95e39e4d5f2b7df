/** The certificate the full pass seals for (skipped by SOPS runs, which seal nothing). */
import { parseSealingCertificate } from '#libs/sealing';
import { StepError, StepHandler } from '../../handler/step-handler';
import { clusterTarget, SEALING_CERT_INPUT, storedCertificate } from '../../target/run-target';

/** The certificate: from the target through the service proxy, or the one given in the request; checked either way. */
export const certFetch: StepHandler<'cert-fetch'> = {
  step: 'cert-fetch',
  async run(ctx) {
    const cluster = clusterTarget(ctx);
    let cert;
    if (cluster) {
      const controller = ctx.state.sealedSecretsController;
      if (!controller) throw new StepError('no sealed-secrets controller recorded for this run', false);
      const pem = await cluster.targets.fetchCertificate(cluster.ref, controller);
      // The fetched certificate itself becomes the run's (its fingerprint goes into CertFetched); kept for the full pass.
      cert = parseSealingCertificate(pem);
      await ctx.inputs.put(ctx.runId, SEALING_CERT_INPUT, pem);
    } else {
      cert = await storedCertificate(ctx);
    }
    await ctx.log.line(`sealing certificate ${cert.fingerprintSha256}, valid until ${cert.notAfter.toISOString()}`);
    return {
      type: 'CertFetched',
      data: { fingerprint_sha256: cert.fingerprintSha256, not_after: cert.notAfter.toISOString() },
    };
  },
};
