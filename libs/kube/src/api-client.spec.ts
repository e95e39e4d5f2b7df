import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { apiClient } from './api-client';
import { kubeError } from './errors';

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

describe('apiClient: Kubernetes API calls with a deadline', () => {
  let server: Server;
  let url: string;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    // Accepts every request and answers none, except /api/v1/namespaces/ok/secrets/s.
    server = createServer((req, res) => {
      if (req.url === '/api/v1/namespaces/ok/secrets/s') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ok' } }));
      } else held.push(() => res.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    held.forEach((release) => release());
    await new Promise((r) => server.close(r));
  });

  it('answers as makeApiClient does when the server answers', async () => {
    const secret = await apiClient(kubeconfigFor(url), CoreV1Api).readNamespacedSecret({ namespace: 'ok', name: 's' });
    expect(secret.metadata?.name).toBe('s');
  });

  it('aborts a call the server never answers, as a retryable error', async () => {
    const call = apiClient(kubeconfigFor(url), CoreV1Api, 300).readNamespacedSecret({ namespace: 'hung', name: 's' });
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeDefined();
    const classified = kubeError(error, 'reading Secret hung/s');
    expect(classified.retryable).toBe(true);
    expect(classified.message).toMatch(/^reading Secret hung\/s: .*did not answer in time$/);
    expect(held.length).toBeGreaterThan(0);
  });
});
