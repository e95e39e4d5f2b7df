import { KubeConfig } from '@kubernetes/client-node';
import { KubeCredentialsSecrets, KubeError } from '../../libs/kube/src';
import { FakeKube } from '../support/fake-kube';

/** Supplied credentials from a management-cluster Secret (test API server, production client). */
describe('credentials Secret of the management cluster', () => {
  let management: FakeKube;
  const reader = (token?: string) =>
    new KubeCredentialsSecrets(() => {
      const kc = new KubeConfig();
      kc.loadFromString(management.kubeconfig(token));
      return kc;
    });
  const TOKEN = 'IssuedByTheDnsProvider-123';

  beforeAll(async () => {
    management = await new FakeKube().start();
    management.putSecret('capi-clusters', 'shop-credentials', { 'credentials.yaml': `data/dns-provider/api-token: ${TOKEN}\n` });
    management.putSecret('capi-clusters', 'no-key', { other: 'x' });
    management.putSecret('capi-clusters', 'not-a-mapping', { 'credentials.yaml': `- ${TOKEN}\n` });
    management.putSecret('capi-clusters', 'bad-key', { 'credentials.yaml': `api-token: ${TOKEN}\n` });
  });
  afterAll(() => management?.stop());

  it('reads the document at key credentials.yaml', async () => {
    expect(await reader().read({ namespace: 'capi-clusters', name: 'shop-credentials' })).toEqual({ 'data/dns-provider/api-token': TOKEN });
  });

  it.each([
    ['nope', 'reading credentials Secret capi-clusters/nope: not found: secrets "nope" not found'],
    ['no-key', 'credentials Secret capi-clusters/no-key has no key "credentials.yaml"'],
    ['not-a-mapping', 'credentials Secret capi-clusters/not-a-mapping key credentials.yaml must be a mapping of "<namespace>/<secret>/<key>" to values'],
    ['bad-key', 'credentials Secret capi-clusters/bad-key key credentials.yaml: "api-token" is not "<namespace>/<secret>/<key>"'],
  ])('refuses %s with a reason that shows no value, not to be retried', async (name, message) => {
    const e = await reader()
      .read({ namespace: 'capi-clusters', name })
      .catch((err) => err);
    expect(e).toBeInstanceOf(KubeError);
    expect(e.message).toBe(message);
    expect(e.retryable).toBe(false);
    expect(e.message).not.toContain(TOKEN);
  });

  it('reports forbidden credentials as not retryable', async () => {
    management.forbiddenTokens.add('forbidden-token');
    const e = await reader('forbidden-token')
      .read({ namespace: 'capi-clusters', name: 'shop-credentials' })
      .catch((err) => err);
    expect(e).toMatchObject({ retryable: false });
    expect(e.message).toMatch(/403/);
  });
});
