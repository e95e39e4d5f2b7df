/**
 * Values that name the reference cluster, moved to the new one: used for the cluster-vars
 * ConfigMap and for a Kustomization's inline postBuild.substitute alike.
 */
import { swapDomain } from './domain';

/** What the reference cluster is known by. */
export interface ReferenceFacts {
  domain: string | undefined;
  region: string | undefined;
  acmeEmails: string[];
  envName: string;
}

/** What the new cluster is known by. */
export interface NewClusterFacts {
  domain: string;
  region: string;
  acmeEmail: string;
  clusterName: string;
}

const CLUSTER_NAME_KEY = /(^|_)CLUSTER(_NAME)?$/i;

/**
 * The new cluster's value for a reference value, or undefined when it does not name the reference
 * cluster (sizes, registry, ...): a name under its domain moves to the new domain, its region,
 * ACME e-mail and (under a cluster-name key) its name become the new cluster's.
 */
export function valueForNewCluster(
  key: string,
  value: string,
  from: ReferenceFacts,
  to: NewClusterFacts,
): string | undefined {
  return (
    (from.domain ? swapDomain(value, from.domain, to.domain) : undefined) ??
    (from.region !== undefined && value === from.region ? to.region : undefined) ??
    (from.acmeEmails.includes(value) ? to.acmeEmail : undefined) ??
    (CLUSTER_NAME_KEY.test(key) && value === from.envName ? to.clusterName : undefined)
  );
}
