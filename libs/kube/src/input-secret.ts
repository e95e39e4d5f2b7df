import { CoreV1Api, KubeConfig, V1Secret } from '@kubernetes/client-node';
import { apiClient } from './api-client';
import { kubeError, KubeError } from './errors';

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
): Promise<V1Secret> {
  const where = `${what} Secret ${ref.namespace}/${ref.name}`;
  const unavailable = new KubeError(
    `${where} is not available: it is missing, lacks the label ${INPUT_LABEL}: "true", or may not be read by the scaffolder`,
    false,
    404,
  );
  let secret: V1Secret;
  try {
    secret = await apiClient(management, CoreV1Api).readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
  } catch (e) {
    const err = kubeError(e, `reading ${where}`);
    throw err.status === 403 || err.status === 404 ? unavailable : err;
  }
  if (secret.metadata?.labels?.[INPUT_LABEL] !== 'true') throw unavailable;
  return secret;
}
