/**
 * Values that name the reference cluster, moved to the new one: used for the cluster-vars
 * ConfigMap and for a Kustomization's inline postBuild.substitute alike.
 */
import { isDomain, isRegion } from '#libs/validation';
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
/** A settings key that names the cluster's domain: DOMAIN, CLUSTER_DOMAIN, SECRET_DOMAIN, BASE_DOMAIN, ... */
const DOMAIN_KEY = /(^|_)DOMAIN$/i;
const REGION_KEY = /(^|_)REGION$/i;

/** A settings key that holds a domain by its name (CLUSTER_DOMAIN, SECRET_DOMAIN). */
export const namesADomain = (key: string) => DOMAIN_KEY.test(key);

/** Keys that say by their name which of the cluster's values they hold (SECRET_DOMAIN, SECRET_ACME_EMAIL, CLUSTER_NAME, REGION). */
const VALUE_BY_KEY_NAME: Array<[RegExp, keyof NewClusterFacts]> = [
  [DOMAIN_KEY, 'domain'],
  [/(^|_)(ACME_)?EMAIL$/i, 'acmeEmail'],
  [CLUSTER_NAME_KEY, 'clusterName'],
  [REGION_KEY, 'region'],
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

/** `staging`, or a numbered cluster of it (`staging-1`, as Flux Operator's runtime info names them). */
const namesEnvironment = (value: string, envName: string) =>
  value === envName || (value.startsWith(`${envName}-`) && /^[0-9]+$/.test(value.slice(envName.length + 1)));

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
    (CLUSTER_NAME_KEY.test(key) && namesEnvironment(value, from.envName) ? to.clusterName : undefined)
  );
}

/** The value of the first key (in name order, so the answer never depends on the file's order) like `key` that `valid` accepts. */
function setting(data: Record<string, string>, key: RegExp, valid: (v: string) => boolean): string | undefined {
  const found = Object.keys(data)
    .sort()
    .find((k) => key.test(k) && valid(data[k]));
  return found === undefined ? undefined : data[found];
}

/**
 * The reference cluster's domain and region as its settings name them (CLUSTER_DOMAIN, DOMAIN,
 * SECRET_DOMAIN, CLUSTER_REGION and the like): what a reference without external-dns in the
 * repository (Flux Operator's runtime info, home-ops' cluster-settings) says of itself.
 */
export function clusterSettingsFacts(data: Record<string, string>): { domain?: string; region?: string } {
  return {
    domain: setting(data, DOMAIN_KEY, (v) => isDomain(v) === null),
    region: setting(data, REGION_KEY, (v) => isRegion(v) === null),
  };
}
