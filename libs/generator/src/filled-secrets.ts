/**
 * Secrets the new cluster fills itself. A `kubernetes.io/service-account-token` Secret written with
 * no values is a request: the API server's token controller writes its `token`, `ca.crt` and
 * `namespace` for the ServiceAccount its annotation names. It holds no credential of the reference
 * cluster, so it is carried as it is (annotation included: without it the API server refuses the
 * Secret), in whichever pass applies its folder, never regenerated, sealed or refused as a secret.
 */
export const SERVICE_ACCOUNT_TOKEN = 'kubernetes.io/service-account-token';

const isEmpty = (values: unknown) =>
  values === undefined ||
  values === null ||
  (typeof values === 'object' && !Array.isArray(values) && Object.keys(values).length === 0);

/** A Secret whose values the API server writes: a service-account token requested with none of its own. */
export function filledByCluster(body: any): boolean {
  return (
    body?.kind === 'Secret' &&
    body.apiVersion === 'v1' &&
    body.type === SERVICE_ACCOUNT_TOKEN &&
    isEmpty(body.data) &&
    isEmpty(body.stringData)
  );
}

/** A Secret or SealedSecret with values of its own: what the secret rules (passes, placement, regeneration) are about. */
export const holdsCredentials = (o: { kind?: string; body?: any }) =>
  o.kind === 'SealedSecret' || (o.kind === 'Secret' && !filledByCluster(o.body));
