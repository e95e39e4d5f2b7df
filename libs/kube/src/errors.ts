import type { ClassifiedError } from '#libs/steps/handler/ports';

/** A Kubernetes call failed; `retryable` says whether waiting and trying again can help. */
export class KubeError extends Error implements ClassifiedError {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

/** Maps an API error (KubeApiError, ApiException or a raw HTTP status) to a reason that names what was being read. */
export function kubeError(e: unknown, what: string): KubeError {
  if (e instanceof KubeError) return e;
  // A call aborted at its deadline (kube-api.ts) is a DOMException whose legacy `code` (23) is no HTTP status.
  if ((e as Error)?.name === 'TimeoutError' || (e as Error)?.name === 'AbortError')
    return new KubeError(`${what}: the API server did not answer in time`, true);
  const code = Number((e as any)?.code ?? (e as any)?.statusCode ?? 0);
  const status = code >= 100 && code <= 599 ? code : 0;
  let reason: string;
  try {
    const body = typeof (e as any)?.body === 'string' ? JSON.parse((e as any).body) : (e as any)?.body;
    reason = body?.message ? `: ${body.message}` : '';
  } catch {
    reason = '';
  }
  if (status === 401) return new KubeError(`${what}: credentials refused (401 Unauthorized)`, false, status);
  if (status === 403) return new KubeError(`${what}: not allowed (403 Forbidden)${reason}`, false, status);
  if (status === 404) return new KubeError(`${what}: not found${reason}`, false, status);
  if (status >= 500 || status === 429)
    return new KubeError(`${what}: API server answered ${status}${reason}`, true, status);
  if (status) return new KubeError(`${what}: API server answered ${status}${reason}`, false, status);
  return new KubeError(`${what}: ${(e as Error)?.message ?? String(e)}`, true);
}
