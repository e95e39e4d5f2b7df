/** Supplied credentials from management-cluster Secrets (provided when the service reaches the management cluster: KUBECONFIG, a service account, or EXECUTOR=kubernetes). */
export const SUPPLIED_CREDENTIALS = Symbol('SUPPLIED_CREDENTIALS');
