import { KubeConfig } from '@kubernetes/client-node';
import { KubeCredentialsSecrets, KubeError } from '#libs/kube';
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
    management.putSecret('capi-clusters', 'shop-credentials', {
      'credentials.yaml': `data/dns-provider/api-token: ${TOKEN}\n`,
    });
    management.putSecret('capi-clusters', 'no-key', { other: 'x' });
    management.putSecret('capi-clusters', 'not-a-mapping', { 'credentials.yaml': `- ${TOKEN}\n` });
    management.putSecret('capi-clusters', 'bad-key', { 'credentials.yaml': `api-token: ${TOKEN}\n` });
    management.putSecret(
      'kube-system',
      'platform-admin-creds',
      { 'credentials.yaml': `data/dns-provider/api-token: ${TOKEN}\n` },
      { input: false },
    );
    management.putSecret('capi-clusters', 'rbac-hidden', {
      'credentials.yaml': `data/dns-provider/api-token: ${TOKEN}\n`,
    });
    management.forbiddenSecrets.add('capi-clusters/rbac-hidden');
    management.forbiddenSecrets.add('capi-clusters/rbac-hidden-absent');
  });
  afterAll(() => management?.stop());

  it('reads the document at key credentials.yaml', async () => {
    expect(await reader().read({ namespace: 'capi-clusters', name: 'shop-credentials' })).toEqual({
      'data/dns-provider/api-token': TOKEN,
    });
  });

  it.each([
    [
      'nope',
      'credentials Secret capi-clusters/nope is not available: it is missing, lacks the label gitops-scaffolder.io/input: "true", or may not be read by the scaffolder',
    ],
    ['no-key', 'credentials Secret capi-clusters/no-key has no key "credentials.yaml"'],
    [
      'not-a-mapping',
      'credentials Secret capi-clusters/not-a-mapping key credentials.yaml must be a mapping of "<namespace>/<secret>/<key>" to values',
    ],
    [
      'bad-key',
      'credentials Secret capi-clusters/bad-key key credentials.yaml: "api-token" is not "<namespace>/<secret>/<key>"',
    ],
  ])('refuses %s with a reason that shows no value, not to be retried', async (name, message) => {
    const e = await reader()
      .read({ namespace: 'capi-clusters', name })
      .catch((err) => err);
    expect(e).toBeInstanceOf(KubeError);
    expect(e.message).toBe(message);
    expect(e.retryable).toBe(false);
    expect(e.message).not.toContain(TOKEN);
  });

  it('gives one answer for a Secret that is missing, not labelled as an input, or forbidden by RBAC (existing or not)', async () => {
    const answers = [];
    for (const [namespace, name] of [
      ['capi-clusters', 'nope'],
      ['kube-system', 'platform-admin-creds'],
      ['capi-clusters', 'rbac-hidden'],
      ['capi-clusters', 'rbac-hidden-absent'],
    ]) {
      const e = await reader()
        .read({ namespace, name })
        .catch((err) => err);
      expect(e).toBeInstanceOf(KubeError);
      answers.push({
        retryable: e.retryable,
        status: e.status,
        message: e.message.replace(`${namespace}/${name}`, '<ref>'),
      });
      expect(e.message).not.toContain(TOKEN);
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual({ retryable: false, status: 404, message: expect.stringContaining('is not available') });
  });

  it('reports forbidden credentials as not retryable', async () => {
    management.forbiddenTokens.add('forbidden-token');
    const e = await reader('forbidden-token')
      .read({ namespace: 'capi-clusters', name: 'shop-credentials' })
      .catch((err) => err);
    expect(e).toMatchObject({ retryable: false });
    expect(e.message).toMatch(/may not be read by the scaffolder/);
  });
});
