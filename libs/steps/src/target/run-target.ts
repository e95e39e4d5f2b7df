/**
 * The run's target as the sealing steps and the full pass see it: the new cluster reached through its kubeconfig
 * Secret, or the certificate the run seals for (given in the request or fetched from the cluster).
 */
import { parseSealingCertificate } from '#libs/sealing';
import type { KubeconfigRef, TargetClusters } from '../handler/ports';
import { requestOf, StepContext, StepError } from '../handler/step-handler';

/** The run input that holds the certificate the run seals for (its PEM: public material, never in an event). */
export const SEALING_CERT_INPUT = 'sealing-cert';

/**
 * The certificate the full pass seals for: the stored PEM, accepted only when it is the one the run's
 * events name (the request's, or the CertFetched the rules accepted), so a PEM written into the inputs
 * stream by anyone else never receives the cluster's secrets.
 */
export async function storedCertificate(ctx: StepContext) {
  const pem = await ctx.inputs.get(ctx.runId, SEALING_CERT_INPUT);
  if (!pem) throw new StepError('the sealing certificate of this run is missing', false);
  const cert = parseSealingCertificate(pem);
  const target = requestOf(ctx).target;
  const expected = target.kind === 'sealing_cert' ? target.fingerprint_sha256 : ctx.state.certFingerprint;
  if (cert.fingerprintSha256 !== expected) {
    throw new StepError(
      `the stored sealing certificate (${cert.fingerprintSha256.slice(0, 16)}…) is not the one this run's events name (${(expected ?? 'none').slice(0, 16)}…); refusing to seal for it`,
      false,
    );
  }
  return cert;
}

/** The target's kubeconfig Secret and the reach into the cluster, or a clear reason why there is none. */
export function clusterTarget(ctx: StepContext): { ref: KubeconfigRef; targets: TargetClusters } | null {
  const target = requestOf(ctx).target;
  if (target.kind !== 'kubeconfig_secret') return null;
  if (!ctx.targets)
    throw new StepError(
      'kubeconfig_secret targets need access to the management cluster (KUBECONFIG, a service account, or EXECUTOR=kubernetes)',
      false,
    );
  return { ref: { namespace: target.namespace, name: target.name, key: target.key }, targets: ctx.targets };
}
