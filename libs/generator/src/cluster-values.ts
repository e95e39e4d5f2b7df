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

/** Keys that say by their name which of the cluster's values they hold (SECRET_DOMAIN, SECRET_ACME_EMAIL, CLUSTER_NAME, REGION). */
const VALUE_BY_KEY_NAME: Array<[RegExp, keyof NewClusterFacts]> = [
  [/(^|_)DOMAIN$/i, 'domain'],
  [/(^|_)(ACME_)?EMAIL$/i, 'acmeEmail'],
  [CLUSTER_NAME_KEY, 'clusterName'],
  [/(^|_)REGION$/i, 'region'],
];

/**
 * The new cluster's value for a key whose value cannot be read (an encrypted settings Secret such as
 * cluster-template's cluster-secrets: SECRET_DOMAIN, SECRET_ACME_EMAIL), by the key's name alone;
 * undefined for any other key (a credential).
 */
export function valueByKeyName(key: string, to: NewClusterFacts): string | undefined {
  const found = VALUE_BY_KEY_NAME.find(([name]) => name.test(key));
  return found ? to[found[1]] : undefined;
}

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
