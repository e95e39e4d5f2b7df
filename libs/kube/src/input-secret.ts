import type { V1Secret } from '@kubernetes/client-node';
import { kubeError, KubeError } from './errors';
import { KubeApi, Wire } from './kube-api';
import type { KubeConfig } from './kube-config';

/** The label a management-cluster Secret must carry (value "true") before the scaffolder reads it as a request's input. */
export const INPUT_LABEL = 'gitops-scaffolder.io/input';

/**
 * A Secret a request names (credentials_secret, target.kubeconfig_secret). Missing, not labelled
 * as an input, and not readable by this process are one error with one message: a caller must not
 * learn which Secrets exist or what RBAC allows. Other failures (API server down) keep their reason.
 */
export async function readInputSecret(
  management: KubeConfig,
  ref: { namespace: string; name: string },
  what: string,
): Promise<Wire<V1Secret>> {
  const where = `${what} Secret ${ref.namespace}/${ref.name}`;
  const unavailable = new KubeError(
    `${where} is not available: it is missing, lacks the label ${INPUT_LABEL}: "true", or may not be read by the scaffolder`,
    false,
    404,
  );
  let secret: Wire<V1Secret>;
  try {
    secret = await new KubeApi(management).read('secrets', ref.namespace, ref.name);
  } catch (e) {
    const err = kubeError(e, `reading ${where}`);
    throw err.status === 403 || err.status === 404 ? unavailable : err;
  }
  if (secret.metadata?.labels?.[INPUT_LABEL] !== 'true') throw unavailable;
  return secret;
}
