import {
  createConfiguration,
  KubeConfig,
  RequestContext,
  ResponseContext,
  ServerConfiguration,
} from '@kubernetes/client-node';

/** How long one Kubernetes API call may take before it is aborted (a hung call must not stall a watcher forever). */
export const KUBE_REQUEST_TIMEOUT_MS = 30_000;

/**
 * `kc.makeApiClient(Api)` with a deadline on every request: the client has none of its own, so one call to an API
 * server that accepts the connection and never answers would hold its caller (the Job watcher's loop, a launcher
 * slot) for good. Same server and authentication as makeApiClient.
 */
export function apiClient<T>(
  kc: KubeConfig,
  Api: new (config: ReturnType<typeof createConfiguration>) => T,
  timeoutMs = KUBE_REQUEST_TIMEOUT_MS,
): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  return new Api(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [
        {
          pre: async (request: RequestContext) => {
            request.setSignal(AbortSignal.timeout(timeoutMs));
            return request;
          },
          post: async (response: ResponseContext) => response,
        },
      ],
    }),
  );
}
