/**
 * What the steps need from Kubernetes, declared here and implemented outside (libs/kube), so the
 * steps depend on no implementation: an adapter imports this file, never the reverse.
 */
import type { SuppliedCredentials } from '#libs/generator';

/** The new cluster, reached through the kubeconfig Secret the request names (read at the moment of use). */
export interface TargetClusters {
  waitForSealedSecrets(
    ref: KubeconfigRef,
    onPoll: (seen: string, waitedMs: number) => Promise<void>,
  ): Promise<{ namespace: string; name: string }>;
  fetchCertificate(ref: KubeconfigRef, controller: { namespace: string; name: string }): Promise<string>;
}

export type KubeconfigRef = { namespace: string; name: string; key: string };

export type CredentialsSecretRef = { namespace: string; name: string };

/** Where supplied credentials (only their issuer can create them) come from: a Secret of the management cluster. */
export interface SuppliedCredentialsSource {
  read(ref: CredentialsSecretRef): Promise<SuppliedCredentials>;
}

/**
 * How an implementation of a port (or git) fails when it knows why: an Error whose `retryable` says
 * whether waiting and trying again can help. Read by its flag, never by its class, so the steps need
 * no class of the library that threw it.
 */
export interface ClassifiedError extends Error {
  readonly retryable: boolean;
}

export function isClassifiedError(e: unknown): e is ClassifiedError {
  return e instanceof Error && typeof (e as { retryable?: unknown }).retryable === 'boolean';
}
