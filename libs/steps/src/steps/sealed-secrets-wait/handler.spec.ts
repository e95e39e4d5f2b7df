import { SEALING_CERT_INPUT, StepError, TargetClusters } from '#libs/steps';
import { parseSealingCertificate } from '#libs/sealing';
import { makeRsaCert } from '../../../../../test/support/certs';
import { logLines, stepContext } from '../../../../../test/support/step-context';
import { sealedSecretsWait } from './handler';

const cert = makeRsaCert().certPem;
const fingerprint = parseSealingCertificate(cert).fingerprintSha256;
const givenCert = {
  kind: 'sealing_cert' as const,
  fingerprint_sha256: fingerprint,
  not_after: '2030-01-01T00:00:00.000Z',
};
const kubeconfig = { kind: 'kubeconfig_secret' as const, namespace: 'clusters', name: 'c1-kubeconfig', key: 'value' };
const infra = { type: 'InfraPushed' as const, data: { commit: 'a'.repeat(40), files_changed: 3 } };

describe('sealed-secrets-wait', () => {
  it('waits for nothing when the request gave the certificate, once the stored one is the run’s', async () => {
    const double = stepContext({ target: givenCert, given: [infra] });
    await double.inputs.put('run-1', SEALING_CERT_INPUT, cert);
    expect(await sealedSecretsWait.run(double.ctx)).toEqual({
      type: 'SealedSecretsReady',
      data: { source: 'given_certificate', controller: null },
    });
  });

  it('refuses a stored certificate other than the one the run names', async () => {
    const double = stepContext({ target: { ...givenCert, fingerprint_sha256: 'ff'.repeat(32) }, given: [infra] });
    await double.inputs.put('run-1', SEALING_CERT_INPUT, cert);
    const failed = sealedSecretsWait.run(double.ctx);
    await expect(failed).rejects.toThrow(/is not the one this run's events name .*refusing to seal for it/);
    await expect(failed).rejects.toMatchObject({ retryable: false });
  });

  it('needs the management cluster for a kubeconfig target, and says so without retrying', async () => {
    const failed = sealedSecretsWait.run(stepContext({ target: kubeconfig, given: [infra] }).ctx);
    await expect(failed).rejects.toBeInstanceOf(StepError);
    await expect(failed).rejects.toThrow(/kubeconfig_secret targets need access to the management cluster/);
  });

  it('polls the target until its controller is Available, reporting what it sees when it changes', async () => {
    const seen = ['Deployment not found', 'Deployment not found', '0/1 replicas available'];
    const targets: TargetClusters = {
      waitForSealedSecrets: async (ref, onPoll) => {
        expect(ref).toEqual({ namespace: 'clusters', name: 'c1-kubeconfig', key: 'value' });
        for (const [i, s] of seen.entries()) await onPoll(s, (i + 1) * 1000);
        return { namespace: 'kube-system', name: 'sealed-secrets-controller' };
      },
      fetchCertificate: () => Promise.reject(new Error('not this step')),
    };
    const double = stepContext({ target: kubeconfig, given: [infra], targets });
    expect(await sealedSecretsWait.run(double.ctx)).toEqual({
      type: 'SealedSecretsReady',
      data: { source: 'cluster', controller: { namespace: 'kube-system', name: 'sealed-secrets-controller' } },
    });
    // The same sight a second later is not reported again (the plan's cadence is a minute).
    expect(double.commands).toEqual([
      { type: 'ReportProgress', step: 'sealed-secrets-wait', waitedMs: 1000, deadlineMs: 1_200_000, seen: seen[0] },
      { type: 'ReportProgress', step: 'sealed-secrets-wait', waitedMs: 3000, deadlineMs: 1_200_000, seen: seen[2] },
    ]);
    expect(await logLines(double)).toContain(
      'sealed-secrets controller kube-system/sealed-secrets-controller is Available',
    );
  });
});
