/**
 * External Secrets Operator objects (`external-secrets.io`): an ExternalSecret names a value in a
 * secret store (Vault, AWS Secrets Manager, ...), never holds one, so it is kept. What can be
 * per-cluster in it is the remote key or path, when it names the reference environment
 * (`kv/staging/podinfo`, `clusters/staging.example.net/redis`): that moves to the new cluster's
 * name or domain, and every such move is listed in the summary. Each entry is also shown in the
 * credential plan as class `external` (store, remote key, target Secret; there is no value).
 */
import type { Document } from 'yaml';
import type { CredentialPlanEntry } from './credential-plan';
import type { ReferenceObject } from './reference';
import type { YamlPath } from './yaml-docs';

const GROUP = 'external-secrets.io';
const EXTERNAL_SECRET_KINDS = ['ExternalSecret', 'ClusterExternalSecret'];

export const isExternalSecret = (body: any): boolean =>
  typeof body?.apiVersion === 'string' &&
  body.apiVersion.split('/')[0] === GROUP &&
  EXTERNAL_SECRET_KINDS.includes(body.kind);

/** A remote key, path or name pattern of an ExternalSecret, by where it is in the object. */
export interface RemoteReference {
  path: YamlPath;
  /** What it is: `remoteRef.key`, `extract.key`, `find.path`, `find.name.regexp`. */
  field: string;
  value: string;
  /** The target Secret key it fills (`spec.data[].secretKey`), `*` for every key of a `dataFrom` entry. */
  secretKey: string;
}

/** Where an ExternalSecret's spec is: its own, or the template a ClusterExternalSecret stamps into namespaces. */
const specPath = (body: any): YamlPath =>
  body.kind === 'ClusterExternalSecret' ? ['spec', 'externalSecretSpec'] : ['spec'];

/** Every remote reference of an ExternalSecret or ClusterExternalSecret. */
export function remoteReferences(body: any): RemoteReference[] {
  const base = specPath(body);
  const spec = base.reduce((node: any, key) => node?.[key], body) ?? {};
  const out: RemoteReference[] = [];
  const add = (path: YamlPath, field: string, value: unknown, secretKey: string) => {
    if (typeof value === 'string' && value.length > 0) out.push({ path: [...base, ...path], field, value, secretKey });
  };
  (Array.isArray(spec.data) ? spec.data : []).forEach((d: any, i: number) =>
    add(['data', i, 'remoteRef', 'key'], 'remoteRef.key', d?.remoteRef?.key, String(d?.secretKey ?? '')),
  );
  (Array.isArray(spec.dataFrom) ? spec.dataFrom : []).forEach((d: any, i: number) => {
    add(['dataFrom', i, 'extract', 'key'], 'extract.key', d?.extract?.key, '*');
    add(['dataFrom', i, 'find', 'path'], 'find.path', d?.find?.path, '*');
    add(['dataFrom', i, 'find', 'name', 'regexp'], 'find.name.regexp', d?.find?.name?.regexp, '*');
  });
  return out;
}

/** The names of the reference environment in remote keys, and what each becomes; longest first (a domain before a name). */
export interface RemoteKeyNames {
  replacements: Array<{ from: string; to: string }>;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A remote key with every whole occurrence of a reference name replaced (not inside a longer word:
 * `staging` moves in `kv/staging/app` and `staging-redis`, not in `stagingarea`). In a regexp a
 * domain may be written escaped (`staging\.example\.net`), and is matched that way too.
 */
export function moveRemoteKey(value: string, names: RemoteKeyNames, regexp: boolean): string {
  let out = value;
  for (const { from, to } of names.replacements) {
    const forms: Array<[string, string]> = [[from, to]];
    if (regexp && /[.]/.test(from)) forms.unshift([escapeRegex(from), escapeRegex(to)]);
    for (const [f, t] of forms)
      out = out.replace(new RegExp(`(?<![A-Za-z0-9])${escapeRegex(f)}(?![A-Za-z0-9])`, 'g'), () => t);
  }
  return out;
}

/** The names to move: the reference domain (if known), then its cluster and environment names, longest first. */
export function remoteKeyNames(
  reference: { domain?: string; names: string[] },
  target: { domain: string; clusterName: string },
): RemoteKeyNames {
  const replacements = [
    ...(reference.domain && reference.domain !== target.domain ? [{ from: reference.domain, to: target.domain }] : []),
    ...[...new Set(reference.names)]
      .filter((n) => n.length > 0 && n !== target.clusterName)
      .map((from) => ({ from, to: target.clusterName })),
  ];
  return { replacements: replacements.sort((a, b) => b.from.length - a.from.length) };
}

export interface RemoteKeyMove {
  file: string;
  object: string;
  field: string;
  from: string;
  to: string;
  /** False when the object is in a shared file the new cluster cannot edit: listed, not moved. */
  moved: boolean;
}

const describeObject = (body: any) =>
  `${body.kind} ${body.metadata?.namespace ? `${body.metadata.namespace}/` : ''}${body.metadata?.name ?? ''}`;

/**
 * Moves, in the document, the remote keys of an ExternalSecret that name the reference; returns
 * the moves (none for any other object).
 */
export function moveRemoteKeys(doc: Document, file: string, names: RemoteKeyNames): RemoteKeyMove[] {
  const body = doc.toJS();
  if (!isExternalSecret(body)) return [];
  const moves: RemoteKeyMove[] = [];
  for (const ref of remoteReferences(body)) {
    const to = moveRemoteKey(ref.value, names, ref.field === 'find.name.regexp');
    if (to === ref.value) continue;
    doc.setIn(ref.path, to);
    moves.push({ file, object: describeObject(body), field: ref.field, from: ref.value, to, moved: true });
  }
  return moves;
}

/** Remote keys of ExternalSecrets in shared files that name the reference: listed, since a shared file is never edited. */
export function unmovedRemoteKeys(objects: ReferenceObject[], names: RemoteKeyNames): RemoteKeyMove[] {
  return objects
    .filter((o) => o.shared && isExternalSecret(o.body))
    .flatMap((o) =>
      remoteReferences(o.body)
        .map((ref) => ({ ref, to: moveRemoteKey(ref.value, names, ref.field === 'find.name.regexp') }))
        .filter(({ ref, to }) => to !== ref.value)
        .map(({ ref, to }) => ({
          file: o.file,
          object: describeObject(o.body),
          field: ref.field,
          from: ref.value,
          to,
          moved: false,
        })),
    );
}

/** The credential plan's `external` entries: one per remote reference of each ExternalSecret (no value, ever). */
export function externalPlanEntries(objects: ReferenceObject[], names: RemoteKeyNames): CredentialPlanEntry[] {
  const seen = new Set<string>();
  return objects
    .filter((o) => isExternalSecret(o.body) && !seen.has(`${o.file}#${o.index}`) && seen.add(`${o.file}#${o.index}`))
    .flatMap((o) => {
      const spec = specPath(o.body).reduce((node: any, key) => node?.[key], o.body) ?? {};
      const store = spec.secretStoreRef ?? {};
      const namespace = o.body.kind === 'ClusterExternalSecret' ? '*' : (o.namespace ?? 'default');
      const target = String(spec.target?.name ?? o.name);
      return remoteReferences(o.body).map((ref): CredentialPlanEntry => ({
        namespace,
        name: target,
        key: ref.secretKey,
        class: 'external',
        store: `${store.kind ?? 'SecretStore'}/${store.name ?? ''}`,
        // Shared files keep theirs (listed in the warnings); the environment's own move.
        remote_key: o.shared ? ref.value : moveRemoteKey(ref.value, names, ref.field === 'find.name.regexp'),
        external_secret: describeObject(o.body),
      }));
    });
}
