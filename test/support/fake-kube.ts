import { execFileSync } from 'node:child_process';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './files';

let tls: { key: string; cert: string } | undefined;

/** One self-signed serving certificate for 127.0.0.1 per test process; kubeconfigs trust it as their CA. */
function servingCert() {
  if (!tls) {
    const dir = tempDir('kube-tls');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=fake-apiserver',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    tls = { key: readFileSync(join(dir, 'k.pem'), 'utf8'), cert: readFileSync(join(dir, 'c.pem'), 'utf8') };
  }
  return tls;
}

/**
 * A small Kubernetes API server for tests (HTTPS, bearer tokens): the real paths and JSON (including Status errors) of
 * the few resources the scaffolder uses. The client under test is the production @kubernetes/client-node code.
 */
export class FakeKube {
  private server!: Server;
  port = 0;
  token = 'test-token-' + Math.random().toString(36).slice(2);
  /** Tokens that authenticate but may do nothing (403). */
  forbiddenTokens = new Set<string>();
  jobs = new Map<string, any>();
  pods = new Map<string, any>();
  podLogs = new Map<string, string>();
  deployments = new Map<string, any>();
  services = new Map<string, any>();
  secrets = new Map<string, any>();
  /** Secrets (ns/name) this server's RBAC forbids reading (403), whether or not they exist. */
  forbiddenSecrets = new Set<string>();
  /** Served at the service-proxy path of `ns/service` (body, status). */
  proxies = new Map<string, { status: number; body: string }>();
  /** Polls of a deployment before it reports Available (per ns/name). */
  availableAfter = new Map<string, number>();
  requests: Array<{ method: string; path: string }> = [];
  /** The label selectors of list requests, in order. */
  labelSelectors: string[] = [];

  async start(): Promise<this> {
    this.server = createServer(servingCert(), (req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as any).port;
    return this;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  get url() {
    return `https://127.0.0.1:${this.port}`;
  }

  /** A kubeconfig for this server (YAML text), with the given token. */
  kubeconfig(token = this.token): string {
    return `apiVersion: v1
kind: Config
clusters:
  - name: fake
    cluster: {server: "${this.url}", certificate-authority-data: "${Buffer.from(servingCert().cert).toString('base64')}"}
users:
  - name: fake
    user: {token: "${token}"}
contexts:
  - name: fake
    context: {cluster: fake, user: fake}
current-context: fake
`;
  }

  kubeconfigFile(token = this.token): string {
    const file = join(tempDir('kubeconfig'), 'config');
    writeFileSync(file, this.kubeconfig(token));
    return file;
  }

  /** The sealed-secrets controller as controller.yaml installs it, or as the Helm chart does. */
  installSealedSecrets(
    shape: 'plain' | 'helm',
    certPem: string,
    opts: { availableAfterPolls?: number; namespace?: string } = {},
  ) {
    const ns = opts.namespace ?? 'kube-system';
    const name = shape === 'plain' ? 'sealed-secrets-controller' : 'sealed-secrets';
    const portName = shape === 'plain' ? undefined : 'http';
    this.deployments.set(`${ns}/${name}`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns, generation: 2 },
      spec: { replicas: 1, minReadySeconds: shape === 'plain' ? 30 : undefined },
      status: {
        observedGeneration: 2,
        replicas: 1,
        availableReplicas: 1,
        conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
      },
    });
    this.availableAfter.set(`${ns}/${name}`, opts.availableAfterPolls ?? 0);
    this.services.set(`${ns}/${name}`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: { ports: [{ ...(portName ? { name: portName } : {}), port: 8080, protocol: 'TCP', targetPort: 8080 }] },
    });
    this.proxies.set(`${ns}/http:${name}:${portName ?? ''}`, { status: 200, body: certPem });
  }

  private status(res: ServerResponse, code: number, reason: string, message: string) {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }),
    );
  }

  private json(res: ServerResponse, code: number, body: unknown) {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url!, this.url);
    const path = decodeURIComponent(url.pathname);
    this.requests.push({ method: req.method!, path });
    const auth = req.headers.authorization ?? '';
    const token = auth.replace(/^Bearer /, '');
    if (token !== this.token && !this.forbiddenTokens.has(token))
      return this.status(res, 401, 'Unauthorized', 'Unauthorized');
    if (this.forbiddenTokens.has(token))
      return this.status(res, 403, 'Forbidden', `forbidden: cannot ${req.method} ${path}`);
    const body = await new Promise<string>((r) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => r(b));
    });
    let m: RegExpMatchArray | null;
    const selector = url.searchParams.get('labelSelector');
    if (selector) this.labelSelectors.push(selector);
    // Equality (`k=v`) and set (`k in (a,b)`) requirements, comma-separated, as the API server reads them.
    const requirements = selector?.match(/[^,(]+(\([^)]*\))?/g) ?? [];
    const matches = (obj: any) =>
      requirements.every((requirement) => {
        const set = /^\s*(\S+)\s+in\s+\(([^)]*)\)\s*$/.exec(requirement);
        const label = (k: string) => obj.metadata?.labels?.[k];
        if (set)
          return set[2]
            .split(',')
            .map((v) => v.trim())
            .includes(label(set[1]));
        const [k, v] = requirement.split('=');
        return label(k) === v;
      });

    if ((m = path.match(/^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs$/))) {
      if (req.method === 'POST') {
        const job = JSON.parse(body);
        const key = `${m[1]}/${job.metadata.name}`;
        if (this.jobs.has(key))
          return this.status(res, 409, 'AlreadyExists', `jobs.batch "${job.metadata.name}" already exists`);
        job.metadata.namespace = m[1];
        job.metadata.uid = 'uid-' + Math.random().toString(36).slice(2);
        job.status = {};
        this.jobs.set(key, job);
        return this.json(res, 201, job);
      }
      return this.json(res, 200, {
        kind: 'JobList',
        apiVersion: 'batch/v1',
        metadata: {},
        items: [...this.jobs.values()].filter((j) => j.metadata.namespace === m![1] && matches(j)),
      });
    }
    if ((m = path.match(/^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs\/([^/]+)$/))) {
      const job = this.jobs.get(`${m[1]}/${m[2]}`);
      if (!job) return this.status(res, 404, 'NotFound', `jobs.batch "${m[2]}" not found`);
      if (req.method === 'DELETE') {
        this.jobs.delete(`${m[1]}/${m[2]}`);
        // The garbage collector: what the Job owns goes with it.
        for (const [key, s] of this.secrets)
          if (s.metadata.ownerReferences?.some((o: any) => o.uid === job.metadata.uid)) this.secrets.delete(key);
        return this.json(res, 200, job);
      }
      return this.json(res, 200, job);
    }
    if ((m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods$/))) {
      return this.json(res, 200, {
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: {},
        items: [...this.pods.values()].filter((p) => p.metadata.namespace === m![1] && matches(p)),
      });
    }
    if ((m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/))) {
      const container = url.searchParams.get('container') ?? '';
      const previous = url.searchParams.get('previous') === 'true';
      const log = this.podLogs.get(`${m[1]}/${m[2]}/${container}${previous ? '/previous' : ''}`);
      if (log === undefined)
        return this.status(
          res,
          previous ? 400 : 404,
          previous ? 'BadRequest' : 'NotFound',
          `previous terminated container "${container}" in pod "${m[2]}" not found`,
        );
      const tail = Number(url.searchParams.get('tailLines') ?? 0);
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(tail ? log.split('\n').filter(Boolean).slice(-tail).join('\n') + '\n' : log);
    }
    if ((m = path.match(/^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments\/([^/]+)$/))) {
      const key = `${m[1]}/${m[2]}`;
      const d = this.deployments.get(key);
      if (!d) return this.status(res, 404, 'NotFound', `deployments.apps "${m[2]}" not found`);
      const left = this.availableAfter.get(key) ?? 0;
      if (left > 0) {
        this.availableAfter.set(key, left - 1);
        return this.json(res, 200, {
          ...d,
          status: {
            observedGeneration: 1,
            replicas: 1,
            unavailableReplicas: 1,
            conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }],
          },
        });
      }
      return this.json(res, 200, d);
    }
    if ((m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)\/proxy\/(.*)$/))) {
      const p = this.proxies.get(`${m[1]}/${m[2]}`);
      if (!p || m[3] !== 'v1/cert.pem')
        return this.status(res, 503, 'ServiceUnavailable', `no endpoints available for service "${m[2]}"`);
      res.writeHead(p.status, { 'content-type': 'application/x-pem-file' });
      return res.end(p.body);
    }
    if ((m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)$/))) {
      const s = this.services.get(`${m[1]}/${m[2]}`);
      return s ? this.json(res, 200, s) : this.status(res, 404, 'NotFound', `services "${m[2]}" not found`);
    }
    if ((m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/secrets$/)) && req.method === 'POST') {
      // As the API server stores a created Secret: stringData merged into base64 data.
      const secret = JSON.parse(body);
      const key = `${m[1]}/${secret.metadata.name}`;
      if (this.secrets.has(key))
        return this.status(res, 409, 'AlreadyExists', `secrets "${secret.metadata.name}" already exists`);
      const encoded = Object.entries(secret.stringData ?? {}).map(([k, v]) => [
        k,
        Buffer.from(String(v)).toString('base64'),
      ]);
      const stored = { ...secret, data: { ...secret.data, ...Object.fromEntries(encoded) } };
      delete stored.stringData;
      stored.metadata.namespace = m[1];
      this.secrets.set(key, stored);
      return this.json(res, 201, stored);
    }
    if ((m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/secrets\/([^/]+)$/))) {
      if (this.forbiddenSecrets.has(`${m[1]}/${m[2]}`)) {
        return this.status(
          res,
          403,
          'Forbidden',
          `secrets "${m[2]}" is forbidden: User "system:serviceaccount:x:y" cannot get resource "secrets" in the namespace "${m[1]}"`,
        );
      }
      const s = this.secrets.get(`${m[1]}/${m[2]}`);
      return s ? this.json(res, 200, s) : this.status(res, 404, 'NotFound', `secrets "${m[2]}" not found`);
    }
    return this.status(res, 404, 'NotFound', `the server could not find the requested resource (${path})`);
  }

  /** A Secret's value under `key`, decoded (what a pod that mounts it reads). */
  secretValue(namespace: string, name: string, key: string): string | undefined {
    const data = this.secrets.get(`${namespace}/${name}`)?.data?.[key];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
  }

  /** Stores a Secret with base64 data, as the API server returns it; labelled as a scaffolder input unless `input` is false. */
  putSecret(namespace: string, name: string, data: Record<string, string>, opts: { input?: boolean } = {}) {
    const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    const labels = opts.input === false ? { app: 'platform' } : { 'gitops-scaffolder.io/input': 'true' };
    this.secrets.set(`${namespace}/${name}`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels },
      type: 'Opaque',
      data: encoded,
    });
  }
}
