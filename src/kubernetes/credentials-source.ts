/** Supplied credentials from management-cluster Secrets (provided when the service reaches the management cluster: KUBECONFIG, a service account, or EXECUTOR=kubernetes). */
export const SUPPLIED_CREDENTIALS = Symbol('SUPPLIED_CREDENTIALS');
/** The new clusters, reached through their kubeconfig Secrets in the management cluster (provided with SUPPLIED_CREDENTIALS). */
export const TARGET_CLUSTERS = Symbol('TARGET_CLUSTERS');
