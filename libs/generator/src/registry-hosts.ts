import type { CredentialPlanEntry } from './credential-plan';
import type { RegistryCredentials } from './credentials';

/** Names of cluster values that say where images come from (`image: ${REGISTRY_HOST}/platform/web:1.4.2`). */
const REGISTRY_VALUE = /(^|_)(REGISTRY|IMAGE_REGISTRY|IMAGE_REPOSITORY|IMAGE_REPO)(_HOST|_SERVER|_URL)?($|_)/i;

/** The registries a pull secret built from `registry` logs in to. */
export function registryServers(registry: RegistryCredentials): string[] {
  if ('server' in registry) return [registry.server];
  try {
    return Object.keys(JSON.parse(registry.dockerConfigJson)?.auths ?? {});
  } catch {
    return [];
  }
}

/** `https://registry.acme.io/v2/` and `registry.acme.io/platform` both name the host `registry.acme.io`. */
const hostOf = (value: string) =>
  value
    .replace(/^[a-z]+:\/\//i, '')
    .split('/')[0]
    .toLowerCase();

/**
 * A new cluster whose pull secret is built for one registry while its cluster values still send the images
 * to another could not pull them: each such value is a warning naming the key, both registries and the fix.
 * Only when the pass builds a pull secret (a `registry` credential); hosts compare without scheme and path.
 */
export function registryHostWarnings(
  values: Record<string, string>,
  registry: RegistryCredentials | undefined,
  plan: readonly CredentialPlanEntry[],
): string[] {
  const pullSecrets = plan.filter((e) => e.class === 'registry');
  if (!registry || pullSecrets.length === 0) return [];
  const servers = registryServers(registry);
  const hosts = new Set(servers.map(hostOf));
  return Object.entries(values)
    .filter(([key, value]) => REGISTRY_VALUE.test(key) && value.trim() !== '' && !hosts.has(hostOf(value)))
    .map(
      ([key, value]) =>
        `cluster value ${key}=${JSON.stringify(value)} sends images to ${hostOf(value)}, but the pull secret ` +
        `${pullSecrets[0].namespace}/${pullSecrets[0].name} is built for ${servers.join(', ') || 'no registry'}: ` +
        `the new cluster could not pull from it; set --var ${key}=... to the registry the credentials are for, ` +
        `or give that registry's credentials`,
    );
}
