import type { V1Deployment } from '@kubernetes/client-node';
import { kubeError, KubeError } from './errors';
import { readInputSecret } from './input-secret';
import { KubeApi, Wire } from './kube-api';
import { KubeConfig } from './kube-config';

export interface KubeconfigSecretRef {
  namespace: string;
  name: string;
  key: string;
}

export interface SealedSecretsLocation {
  namespace: string;
  /** Deployment (and Service) names to try: controller.yaml's, then the Helm chart's default. */
  names: string[];
}

export const DEFAULT_SEALED_SECRETS: SealedSecretsLocation = {
  namespace: 'kube-system',
  names: ['sealed-secrets-controller', 'sealed-secrets'],
};

/**
 * The new cluster's kubeconfig, read from a Secret of the management cluster at the moment of use
 * (only one labelled as an input, see readInputSecret).
 * Its content is never logged, stored or put in an error message.
 */
export async function targetKubeConfig(management: KubeConfig, ref: KubeconfigSecretRef): Promise<KubeConfig> {
  const where = `kubeconfig Secret ${ref.namespace}/${ref.name}`;
  const secret = await readInputSecret(management, ref, 'kubeconfig');
  const encoded = secret.data?.[ref.key];
  if (!encoded) throw new KubeError(`${where} has no key "${ref.key}"`, false);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw new KubeError(`${where} key "${ref.key}" is not a kubeconfig`, false);
  }
  if (!kc.getCurrentCluster()) throw new KubeError(`${where} key "${ref.key}" names no current cluster`, false);
  return kc;
}

export interface AvailabilityCheck {
  ready: boolean;
  /** The deployment that is Available, when ready. */
  name?: string;
  /** What was seen, for progress messages and the failure reason. */
  seen: string;
}

function describeDeployment(d: Wire<V1Deployment>): { ready: boolean; seen: string } {
  const available = d.status?.conditions?.find((c) => c.type === 'Available');
  const current = (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
  const ready = available?.status === 'True' && current;
  const seen = `${d.metadata?.name}: Available=${available?.status ?? 'unknown'}${available?.reason ? ` (${available.reason})` : ''}, observedGeneration ${d.status?.observedGeneration ?? 0}/${d.metadata?.generation ?? 0}`;
  return { ready, seen };
}

/** One look at the candidate Deployments: Available with a current observedGeneration. */
export async function checkSealedSecrets(kc: KubeConfig, loc: SealedSecretsLocation): Promise<AvailabilityCheck> {
  const api = new KubeApi(kc);
  const seen: string[] = [];
  for (const name of loc.names) {
    try {
      const d = await api.read('deployments', loc.namespace, name);
      const state = describeDeployment(d);
      if (state.ready) return { ready: true, name, seen: state.seen };
      seen.push(state.seen);
    } catch (e) {
      const err = kubeError(e, `Deployment ${loc.namespace}/${name}`);
      if (err.status !== 404) throw err;
      seen.push(`${name}: not found`);
    }
  }
  return { ready: false, seen: seen.join('; ') };
}

export interface WaitOptions {
  deadlineMs: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  onPoll?: (check: AvailabilityCheck, waitedMs: number) => void | Promise<void>;
  sleep?: (ms: number) => Promise<void>;
}

/** Polls with exponential backoff until a candidate is Available or the deadline passes. */
export async function waitForSealedSecrets(
  kc: KubeConfig,
  loc: SealedSecretsLocation,
  opts: WaitOptions,
): Promise<string> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const start = Date.now();
  let delay = opts.initialDelayMs ?? 2000;
  for (;;) {
    let last: AvailabilityCheck;
    try {
      last = await checkSealedSecrets(kc, loc);
    } catch (e) {
      const err = kubeError(e, 'sealed-secrets readiness');
      if (!err.retryable) throw err;
      last = { ready: false, seen: err.message };
    }
    const waited = Date.now() - start;
    await opts.onPoll?.(last, waited);
    if (last.ready) return last.name!;
    if (waited + delay > opts.deadlineMs) {
      throw new KubeError(
        `sealed-secrets controller in ${loc.namespace} not Available after ${Math.round(waited / 1000)} s; last seen: ${last.seen}`,
        false,
      );
    }
    await sleep(delay);
    delay = Math.min(opts.maxDelayMs ?? 30_000, delay * 2);
  }
}

/**
 * The controller's certificate through the service-proxy subresource, as kubeseal fetches it: the
 * Service's first port name (empty for controller.yaml, "http" for the Helm chart) in
 * /api/v1/namespaces/<ns>/services/http:<name>:<port>/proxy/v1/cert.pem.
 */
export async function fetchSealingCertificate(kc: KubeConfig, namespace: string, name: string): Promise<string> {
  const api = new KubeApi(kc);
  let portName: string;
  try {
    const svc = await api.read('services', namespace, name);
    portName = svc.spec?.ports?.[0]?.name ?? '';
  } catch (e) {
    throw kubeError(e, `Service ${namespace}/${name}`);
  }
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/http:${encodeURIComponent(name)}:${encodeURIComponent(portName)}/proxy/v1/cert.pem`;
  let res;
  try {
    res = await api.get(path, 'application/x-pem-file, */*');
  } catch (e) {
    throw kubeError(e, 'certificate fetch through the service proxy');
  }
  if (res.status !== 200) {
    throw kubeError(
      { code: res.status, body: res.body },
      `certificate fetch through the service proxy (http:${name}:${portName})`,
    );
  }
  return res.body;
}
