/** Supplied credentials from management-cluster Secrets (provided only with EXECUTOR=kubernetes). */
export const SUPPLIED_CREDENTIALS = Symbol('SUPPLIED_CREDENTIALS');
