/**
 * Values that name the reference cluster, moved to the new one: used for the cluster-vars
 * ConfigMap and for a Kustomization's inline postBuild.substitute alike.
 */
import { isDomain, isRegion } from '../../validation/src';
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

/** The first value under a key like `*_DOMAIN` / `*_REGION` that is a domain / a region. */
function setting(data: Record<string, string>, key: RegExp, valid: (v: string) => boolean): string | undefined {
  return Object.entries(data).find(([k, v]) => key.test(k) && valid(v))?.[1];
}

/** The reference cluster's domain and region as its settings name them (CLUSTER_DOMAIN, CLUSTER_REGION and the like). */
export function clusterSettingsFacts(data: Record<string, string>): { domain?: string; region?: string } {
  return {
    domain: setting(data, /(^|_)DOMAIN$/i, (v) => isDomain(v) === null),
    region: setting(data, /(^|_)REGION$/i, (v) => isRegion(v) === null),
  };
}
