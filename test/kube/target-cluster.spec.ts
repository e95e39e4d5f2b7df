import { KubeConfig } from '@kubernetes/client-node';
import {
  DEFAULT_SEALED_SECRETS,
  fetchSealingCertificate,
  KubeError,
  targetKubeConfig,
  waitForSealedSecrets,
} from '#libs/kube';
import { parseSealingCertificate } from '#libs/sealing';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';

const fromFake = (fake: FakeKube, token?: string) => {
  const kc = new KubeConfig();
  kc.loadFromString(fake.kubeconfig(token));
  return kc;
};
const fast = { deadlineMs: 5_000, initialDelayMs: 10, maxDelayMs: 40 };

describe('target cluster: sealed-secrets readiness and certificate (test API server, production client)', () => {
  let management: FakeKube;
  let target: FakeKube;
  const cert = makeRsaCert();

  beforeEach(async () => {
    management = await new FakeKube().start();
    target = await new FakeKube().start();
    management.putSecret('capi-clusters', 'acme-kubeconfig', { value: target.kubeconfig() });
  });
  afterEach(async () => {
    await management.stop();
    await target.stop();
  });

  it.each([
    ['plain controller.yaml', 'plain' as const, 'sealed-secrets-controller', 'http:sealed-secrets-controller:'],
    ['Helm chart', 'helm' as const, 'sealed-secrets', 'http:sealed-secrets:http'],
  ])(
    'finds the %s install and fetches its certificate through the service proxy',
    async (_what, shape, name, proxyName) => {
      target.installSealedSecrets(shape, cert.certPem);
      const kc = await targetKubeConfig(fromFake(management), {
        namespace: 'capi-clusters',
        name: 'acme-kubeconfig',
        key: 'value',
      });
      expect(await waitForSealedSecrets(kc, DEFAULT_SEALED_SECRETS, fast)).toBe(name);
      const pem = await fetchSealingCertificate(kc, 'kube-system', name);
      expect(parseSealingCertificate(pem).fingerprintSha256).toBe(
        parseSealingCertificate(cert.certPem).fingerprintSha256,
      );
      expect(target.requests.map((r) => r.path)).toContain(
        `/api/v1/namespaces/kube-system/services/${proxyName}/proxy/v1/cert.pem`,
      );
    },
  );

  it('waits with backoff until the Deployment is Available with a current observedGeneration', async () => {
    target.installSealedSecrets('helm', cert.certPem, { availableAfterPolls: 3 });
    const seen: string[] = [];
    const sleeps: number[] = [];
    const name = await waitForSealedSecrets(
      fromFake(target),
      { namespace: 'kube-system', names: ['sealed-secrets'] },
      {
        ...fast,
        onPoll: (c) => void seen.push(c.seen),
        sleep: async (ms) => void sleeps.push(ms),
      },
    );
    expect(name).toBe('sealed-secrets');
    expect(seen).toHaveLength(4);
    expect(seen[0]).toBe('sealed-secrets: Available=False (MinimumReplicasUnavailable), observedGeneration 1/2');
    expect(sleeps).toEqual([10, 20, 40]);
  });

  it('gives up at the deadline, saying what it last saw', async () => {
    const err = await waitForSealedSecrets(fromFake(target), DEFAULT_SEALED_SECRETS, {
      deadlineMs: 200,
      initialDelayMs: 20,
      maxDelayMs: 50,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(
      /not Available after \d+ s; last seen: sealed-secrets-controller: not found; sealed-secrets: not found/,
    );
  });

  it('names a missing kubeconfig Secret and a missing key, without their content', async () => {
    const missing = await targetKubeConfig(fromFake(management), {
      namespace: 'capi-clusters',
      name: 'nope',
      key: 'value',
    }).catch((e) => e);
    expect(missing.message).toBe(
      'kubeconfig Secret capi-clusters/nope is not available: it is missing, lacks the label gitops-scaffolder.io/input: "true", or may not be read by the scaffolder',
    );
    management.putSecret('capi-clusters', 'unlabelled-kubeconfig', { value: target.kubeconfig() }, { input: false });
    const unlabelled = await targetKubeConfig(fromFake(management), {
      namespace: 'capi-clusters',
      name: 'unlabelled-kubeconfig',
      key: 'value',
    }).catch((e) => e);
    expect(unlabelled.message).toBe(missing.message.replace('nope', 'unlabelled-kubeconfig'));
    const noKey = await targetKubeConfig(fromFake(management), {
      namespace: 'capi-clusters',
      name: 'acme-kubeconfig',
      key: 'other',
    }).catch((e) => e);
    expect(noKey.message).toBe('kubeconfig Secret capi-clusters/acme-kubeconfig has no key "other"');
  });

  it('reports refused (401) and forbidden (403) credentials as non-retryable', async () => {
    const wrong = await targetKubeConfig(fromFake(management, 'wrong-token'), {
      namespace: 'capi-clusters',
      name: 'acme-kubeconfig',
      key: 'value',
    }).catch((e) => e);
    expect(wrong).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/credentials refused \(401 Unauthorized\)/),
    });
    target.forbiddenTokens.add('limited');
    const forbidden = await waitForSealedSecrets(fromFake(target, 'limited'), DEFAULT_SEALED_SECRETS, fast).catch(
      (e) => e,
    );
    expect(forbidden).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/not allowed \(403 Forbidden\)/),
    });
  });

  it('treats a proxy without ready endpoints (503) as retryable', async () => {
    target.installSealedSecrets('plain', cert.certPem);
    target.proxies.clear();
    const err = await fetchSealingCertificate(fromFake(target), 'kube-system', 'sealed-secrets-controller').catch(
      (e) => e,
    );
    expect(err).toMatchObject({ retryable: true, status: 503 });
  });
});
