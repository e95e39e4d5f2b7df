/**
 * Secrets that Flux sources read: a GitRepository's, HelmRepository's, OCIRepository's or Bucket's
 * credentials, an ImageRepository's registry login. They open another system (a Git host, a chart or
 * image registry, an object store) that the new cluster must reach with credentials that system
 * issued, so a fresh random value would only lock the cluster out: every key of such a Secret is
 * supplied by the caller, never generated. The same holds for the Secret an External Secrets
 * store (SecretStore, ClusterSecretStore) logs into Vault or a cloud secret manager with.
 */
import type { ReferenceSecret } from './credential-plan';
import type { ReferenceObject } from './reference';

/** The source kinds, by API group (any version), that read Secrets. */
const SOURCE_KINDS: Record<string, string[]> = {
  'source.toolkit.fluxcd.io': ['GitRepository', 'HelmRepository', 'OCIRepository', 'Bucket', 'HelmChart'],
  'image.toolkit.fluxcd.io': ['ImageRepository'],
  // Flux Operator: the sync source's login and the registry logins for Flux's own images and manifests.
  'fluxcd.controlplane.io': ['FluxInstance'],
};

/** Where a source names a Secret of its own namespace: credentials, TLS client/CA, proxy, signature keys. */
const SECRET_REFS: string[][] = [['secretRef'], ['certSecretRef'], ['proxySecretRef'], ['verify', 'secretRef']];
/** Where a FluxInstance names a Secret of its namespace, by name alone. */
const FLUX_INSTANCE_SECRETS: string[][] = [
  ['sync', 'pullSecret'],
  ['distribution', 'imagePullSecret'],
  ['distribution', 'artifactPullSecret'],
];

const STORE_KINDS = ['SecretStore', 'ClusterSecretStore'];
const isStore = (o: ReferenceObject) =>
  o.apiVersion.split('/')[0] === 'external-secrets.io' && STORE_KINDS.includes(o.kind);

function isSource(o: ReferenceObject): boolean {
  const group = o.apiVersion.split('/')[0];
  return (SOURCE_KINDS[group]?.includes(o.kind) ?? false) || isStore(o);
}

/**
 * The Secrets a store's provider authenticates with: every `...SecretRef` under `spec.provider`
 * (`tokenSecretRef`, `secretAccessKeySecretRef`, `clientSecret`'s ...), "namespace/name"; a
 * ClusterSecretStore names the namespace, a SecretStore's are its own.
 */
function storeSecretIds(o: ReferenceObject): string[] {
  const ids: string[] = [];
  const visit = (node: unknown, key: string) => {
    if (Array.isArray(node)) node.forEach((n) => visit(n, key));
    else if (node !== null && typeof node === 'object') {
      const ref = node as Record<string, unknown>;
      if (/secretref$/i.test(key) && typeof ref.name === 'string' && ref.name) {
        // A ClusterSecretStore's reference without a namespace names no Secret (the operator refuses it).
        if (o.kind === 'SecretStore') ids.push(`${o.namespace ?? 'default'}/${ref.name}`);
        else if (typeof ref.namespace === 'string') ids.push(`${ref.namespace}/${ref.name}`);
      }
      for (const [k, v] of Object.entries(ref)) visit(v, k);
    }
  };
  visit(o.body?.spec?.provider, 'provider');
  return ids;
}

const describe = (o: ReferenceObject) => `${o.kind} ${o.namespace ?? 'default'}/${o.name} (${o.file})`;

/** The Secret names (in the source's namespace) a source object reads. */
export function sourceSecretNames(o: ReferenceObject): string[] {
  const at = (path: string[]) => path.reduce((node: any, key) => node?.[key], o.body?.spec);
  const names = o.kind === 'FluxInstance' ? FLUX_INSTANCE_SECRETS.map(at) : SECRET_REFS.map((path) => at(path)?.name);
  return names.filter((name): name is string => typeof name === 'string' && name.length > 0);
}

/** "namespace/name" of every Secret a source among the objects reads -> the sources reading it (kind, namespace/name, file). */
export function sourceSecretUsers(objects: ReferenceObject[]): Map<string, string[]> {
  const users = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const o of objects.filter(isSource)) {
    const source = describe(o);
    const ids = isStore(o)
      ? storeSecretIds(o)
      : sourceSecretNames(o).map((name) => `${o.namespace ?? 'default'}/${name}`);
    for (const id of ids) {
      if (seen.has(`${id}\0${source}`)) continue;
      seen.add(`${id}\0${source}`);
      users.set(id, [...(users.get(id) ?? []), source]);
    }
  }
  return users;
}

/** The reference Secrets with the sources that read them (`usedBy`), for the credential plan. */
export function withSourceUse(secrets: ReferenceSecret[], objects: ReferenceObject[]): ReferenceSecret[] {
  const users = sourceSecretUsers(objects);
  if (users.size === 0) return secrets;
  return secrets.map((s) => {
    const usedBy = users.get(`${s.namespace}/${s.body?.metadata?.name}`);
    return usedBy ? { ...s, usedBy } : s;
  });
}
