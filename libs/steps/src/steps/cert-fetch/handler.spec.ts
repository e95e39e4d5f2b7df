import { SEALING_CERT_INPUT, TargetClusters } from '#libs/steps';
import { parseSealingCertificate } from '#libs/sealing';
import { makeRsaCert } from '../../../../../test/support/certs';
import { stepContext } from '../../../../../test/support/step-context';
import { certFetch } from './handler';

const cert = makeRsaCert().certPem;
const parsed = parseSealingCertificate(cert);
const kubeconfig = { kind: 'kubeconfig_secret' as const, namespace: 'clusters', name: 'c1-kubeconfig', key: 'value' };
const infra = { type: 'InfraPushed' as const, data: { commit: 'a'.repeat(40), files_changed: 3 } };
const controller = { namespace: 'kube-system', name: 'sealed-secrets' };
const fetched = {
  type: 'CertFetched',
  data: { fingerprint_sha256: parsed.fingerprintSha256, not_after: parsed.notAfter.toISOString() },
};

describe('cert-fetch', () => {
  it('fetches the certificate from the controller the wait found, and keeps it for the full pass', async () => {
    const asked: unknown[] = [];
    const targets: TargetClusters = {
      waitForSealedSecrets: () => Promise.reject(new Error('not this step')),
      fetchCertificate: async (ref, c) => (asked.push([ref, c]), cert),
    };
    const ready = { type: 'SealedSecretsReady' as const, data: { source: 'cluster' as const, controller } };
    const double = stepContext({ target: kubeconfig, given: [infra, ready], targets });
    expect(await certFetch.run(double.ctx)).toEqual(fetched);
    expect(asked).toEqual([[{ namespace: 'clusters', name: 'c1-kubeconfig', key: 'value' }, controller]]);
    expect(await double.inputs.get('run-1', SEALING_CERT_INPUT)).toBe(cert);
  });

  it('fails without retrying when the run recorded no controller', async () => {
    const targets = { waitForSealedSecrets: jest.fn(), fetchCertificate: jest.fn() };
    const ready = { type: 'SealedSecretsReady' as const, data: { source: 'cluster' as const, controller: null } };
    const failed = certFetch.run(stepContext({ target: kubeconfig, given: [infra, ready], targets }).ctx);
    await expect(failed).rejects.toThrow('no sealed-secrets controller recorded for this run');
    await expect(failed).rejects.toMatchObject({ retryable: false });
    expect(targets.fetchCertificate).not.toHaveBeenCalled();
  });

  it('reads the certificate the request gave, checked against the run', async () => {
    const target = { kind: 'sealing_cert' as const, fingerprint_sha256: parsed.fingerprintSha256, not_after: 'x' };
    const ready = {
      type: 'SealedSecretsReady' as const,
      data: { source: 'given_certificate' as const, controller: null },
    };
    const double = stepContext({ target, given: [infra, ready] });
    await double.inputs.put('run-1', SEALING_CERT_INPUT, cert);
    expect(await certFetch.run(double.ctx)).toEqual(fetched);
    const missing = stepContext({ target, given: [infra, ready] });
    await expect(certFetch.run(missing.ctx)).rejects.toThrow('the sealing certificate of this run is missing');
  });
});
