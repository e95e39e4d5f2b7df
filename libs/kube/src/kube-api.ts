import { request as httpRequest } from 'node:http';
import { request as httpsRequest, RequestOptions } from 'node:https';
import type { V1Deployment, V1Job, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import { KubeError } from './errors';
import type { KubeConfig } from './kube-config';

/** How long one Kubernetes API call may take before it is aborted (a hung call must not stall a watcher forever). */
export const KUBE_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The most of one answer that is read: the largest this service asks for is the list of its Jobs in the provisioning
 * namespace (a few KiB each). A larger answer is refused rather than held in memory.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** How much of a refusal's body is kept on the error (a Status object: its message is all that is read). */
const ERROR_BODY_BYTES = 4096;

/**
 * An object as the API server sends it: the models' Date fields (creationTimestamp, lastTransitionTime) are RFC 3339
 * strings in JSON, and this client does not convert them.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends ReadonlyArray<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** The API server refused a request: `code` is its HTTP status, `body` the start of its answer (read by kubeError). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`the API server answered ${code}`);
    this.name = 'KubeApiError';
  }
}

/** The resources this service reads and writes, by their plural name, and where each lives in the API. */
const RESOURCES = {
  jobs: '/apis/batch/v1',
  deployments: '/apis/apps/v1',
  secrets: '/api/v1',
  pods: '/api/v1',
  services: '/api/v1',
} as const;
type Objects = { jobs: V1Job; deployments: V1Deployment; secrets: V1Secret; pods: V1Pod; services: V1Service };
export type Resource = keyof typeof RESOURCES;

type Query = Record<string, string | number | boolean | undefined>;

/** `/apis/batch/v1/namespaces/<ns>/jobs[/<name>]`, each segment encoded. */
export function resourcePath(resource: Resource, namespace: string, name?: string): string {
  const collection = `${RESOURCES[resource]}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`;
}

/**
 * The few JSON requests this service sends to a Kubernetes API server, with the kubeconfig's server, TLS and
 * credentials (KubeConfig.applyToHTTPSOptions: token, client certificate, exec plugin, OIDC, basic auth,
 * impersonation, proxy), a deadline on every request (the API server may accept a connection and never answer)
 * and a bound on every answer. In place of the generated client, which loads every API and model of Kubernetes.
 */
export class KubeApi {
  constructor(
    private readonly kc: KubeConfig,
    private readonly timeoutMs = KUBE_REQUEST_TIMEOUT_MS,
  ) {}

  read<R extends Resource>(resource: R, namespace: string, name: string): Promise<Wire<Objects[R]>> {
    return this.json('GET', resourcePath(resource, namespace, name));
  }

  async list<R extends Resource>(resource: R, namespace: string, labelSelector: string): Promise<Wire<Objects[R]>[]> {
    const list = await this.json<{ items?: Wire<Objects[R]>[] }>('GET', resourcePath(resource, namespace), {
      query: { labelSelector },
    });
    return list.items ?? [];
  }

  create<R extends Resource>(resource: R, namespace: string, body: Objects[R]): Promise<Wire<Objects[R]>> {
    return this.json('POST', resourcePath(resource, namespace), { body });
  }

  /** A container's log (text), as `kubectl logs` reads it. */
  async podLog(
    namespace: string,
    pod: string,
    query: { container: string; previous?: boolean; tailLines?: number },
  ): Promise<string> {
    const res = await this.send('GET', `${resourcePath('pods', namespace, pod)}/log`, { query, accept: 'text/plain' });
    if (res.status !== 200) throw new KubeApiError(res.status, res.body.slice(0, ERROR_BODY_BYTES));
    return res.body;
  }

  /** A GET of a path as given (the service-proxy path must not be re-encoded): the status and the text answered. */
  get(path: string, accept: string): Promise<{ status: number; body: string }> {
    return this.send('GET', path, { accept });
  }

  private async json<T>(method: 'GET' | 'POST', path: string, opts: { query?: Query; body?: unknown } = {}) {
    const res = await this.send(method, path, { ...opts, accept: 'application/json' });
    if (res.status < 200 || res.status > 299) throw new KubeApiError(res.status, res.body.slice(0, ERROR_BODY_BYTES));
    try {
      return JSON.parse(res.body) as T;
    } catch {
      // Not the answer's text: it may be a Secret's.
      throw new KubeError(`${method} ${path}: the API server's answer is not JSON`, true);
    }
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    opts: { query?: Query; body?: unknown; accept: string },
  ): Promise<{ status: number; body: string }> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new KubeError('kubeconfig names no current cluster', false);
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const options: RequestOptions = {
      method,
      headers: {
        accept: opts.accept,
        ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
      },
    };
    await this.kc.applyToHTTPSOptions(options);
    // The deadline starts with the request (after an exec plugin or OIDC refresh has supplied the credentials).
    options.signal = AbortSignal.timeout(this.timeoutMs);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) return void chunks.push(chunk);
          reject(new KubeError(`${method} ${path}: the answer is larger than ${MAX_ANSWER_BYTES} bytes`, false));
          req.destroy();
        });
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }
}
