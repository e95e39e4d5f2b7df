import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { kubeError } from './errors';
import { KubeApi, MAX_ANSWER_BYTES } from './kube-api';
import { KubeConfig } from './kube-config';

/** A kubeconfig for an API server at `server` with no credentials. */
function kubeconfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('KubeApi: Kubernetes API calls with a deadline and a bounded answer', () => {
  let server: Server;
  let url: string;
  const held: Array<() => void> = [];
  const posted: Array<{ path: string; type?: string; body: string }> = [];

  beforeAll(async () => {
    // Accepts every request and answers none, except the paths below.
    server = createServer((req, res) => {
      if (req.url === '/api/v1/namespaces/ok/secrets/s') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ok' } }));
      } else if (req.url === '/api/v1/namespaces/big/secrets/s') {
        res.setHeader('content-type', 'application/json');
        res.end(`{"data":{"k":"${'x'.repeat(MAX_ANSWER_BYTES)}"}}`);
      } else if (req.url === '/api/v1/namespaces/odd/secrets/s') {
        res.end('<html>a proxy page that mentions c2VjcmV0</html>');
      } else if (req.url === '/apis/batch/v1/namespaces/ok/jobs' && req.method === 'POST') {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          posted.push({ path: req.url!, type: req.headers['content-type'], body });
          res.writeHead(409, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'jobs "j" exists' }));
        });
      } else held.push(() => res.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    held.forEach((release) => release());
    await new Promise((r) => server.close(r));
  });

  it('reads an object when the server answers', async () => {
    const secret = await new KubeApi(kubeconfigFor(url)).read('secrets', 'ok', 's');
    expect(secret.metadata?.name).toBe('s');
  });

  it('aborts a call the server never answers, as a retryable error', async () => {
    const error = await new KubeApi(kubeconfigFor(url), 300).read('secrets', 'hung', 's').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeDefined();
    const classified = kubeError(error, 'reading Secret hung/s');
    expect(classified.retryable).toBe(true);
    expect(classified.message).toMatch(/^reading Secret hung\/s: .*did not answer in time$/);
    expect(held.length).toBeGreaterThan(0);
  });

  it('posts JSON and classifies a refusal by its status and Status message', async () => {
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' } };
    const error = await new KubeApi(kubeconfigFor(url)).create('jobs', 'ok', job).catch((e: unknown) => e);
    expect(posted).toEqual([
      { path: '/apis/batch/v1/namespaces/ok/jobs', type: 'application/json', body: JSON.stringify(job) },
    ]);
    const classified = kubeError(error, 'creating Job ok/j');
    expect(classified).toMatchObject({ status: 409, retryable: false });
    expect(classified.message).toBe('creating Job ok/j: API server answered 409: jobs "j" exists');
  });

  it('refuses an answer larger than its bound, and one that is not JSON without quoting it', async () => {
    const api = new KubeApi(kubeconfigFor(url));
    await expect(api.read('secrets', 'big', 's')).rejects.toThrow(
      `the answer is larger than ${MAX_ANSWER_BYTES} bytes`,
    );
    const odd = await api.read('secrets', 'odd', 's').catch((e: Error) => e);
    expect(kubeError(odd, 'reading Secret odd/s').message).toMatch(/answer is not JSON$/);
    expect(String((odd as Error).message)).not.toContain('c2VjcmV0');
  });
});
