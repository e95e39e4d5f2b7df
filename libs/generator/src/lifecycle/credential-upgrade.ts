/**
 * Credentials through an upgrade: never regenerated. A SealedSecret the environment has keeps the
 * ciphertext of every key it has; a key the new reference commit adds is taken from the new render,
 * made with the cluster's own certificate, and a key it removes is removed. A SOPS file is kept byte
 * for byte while its key set is unchanged; a changed key set is refused (adding or removing a value
 * means re-encrypting, which needs the file's data key, and the upgrade has none). A credential file the
 * reference adds comes whole from the new render. Only keys whose value the render can know are added:
 * generated ones and configuration; a supplied, registry or derived key is refused by name (its value is
 * the cluster's, or built from credentials the cluster already holds). No value is ever named.
 */
import type { Document } from 'yaml';
import type { GenerateSummary, SealedObjectSummary } from '../context';
import { parseDocuments, stringifyDocuments } from '../yaml-docs';

/** What the renders say of one credential file. */
export interface CredentialRenders {
  path: string;
  old: GenerateSummary;
  new: GenerateSummary;
  /** The cluster's certificate (sealed-secrets) or recipients (SOPS) were given, so the new render's credentials are the cluster's. */
  sealedForCluster: boolean;
}

export interface CredentialOutcome {
  /** The file's new content (ours with keys added and removed), or undefined: ours is kept byte for byte. */
  content?: Buffer;
  keys_added: string[];
  keys_removed: string[];
  refusals: string[];
}

const objectsOf = (summary: GenerateSummary, path: string) =>
  summary.objects_sealed.filter((o) => o.file === path || o.sources?.includes(path));
const idOf = (o: { namespace: string; name: string }) => `${o.namespace}/${o.name}`;

/** Why the new render's value of `key` of the Secret `id` cannot be kept for the cluster, or null. */
function unaddable(summary: GenerateSummary, id: string, key: string, newSecret: boolean): string | null {
  const [namespace, name] = id.split('/');
  const entry = summary.credential_plan.find((e) => e.namespace === namespace && e.name === name && e.key === key);
  const what = `${id}/${key}`;
  if (!entry) return `${what}: the reference's credential plan does not say where its value comes from`;
  if (entry.class === 'generated' || entry.class === 'configuration') return null;
  if (entry.class === 'derived' && newSecret && (entry.from ?? []).every((from) => from === id)) return null;
  if (entry.class === 'derived')
    return `${what} is built from credentials the cluster already holds, which an upgrade cannot read`;
  return `${what} is a ${entry.class} credential: its value is the cluster's, give it with a full pass`;
}

/** Keys the new render has and the old has not, and the reverse, per Secret. */
function keyChanges(old: SealedObjectSummary[], next: SealedObjectSummary[]) {
  return next
    .map((n) => {
      const o = old.find((x) => idOf(x) === idOf(n));
      return { id: idOf(n), added: n.keys.filter((k) => !o?.keys.includes(k)), removed: [] as string[] };
    })
    .concat(
      old.map((o) => {
        const n = next.find((x) => idOf(x) === idOf(o));
        return { id: idOf(o), added: [], removed: n ? o.keys.filter((k) => !n.keys.includes(k)) : [] };
      }),
    )
    .filter((c) => c.added.length + c.removed.length > 0);
}

/** Ours, new render: the SealedSecret documents of both by id. */
function sealedDocs(text: string, path: string) {
  const docs = parseDocuments(text, path);
  const byId = new Map<string, Document>(
    docs
      .filter((d) => d.get('kind') === 'SealedSecret')
      .map((d) => [`${d.getIn(['metadata', 'namespace'])}/${d.getIn(['metadata', 'name'])}`, d] as const),
  );
  return { docs, byId };
}

/** A credential file the environment, the old and the new render all have. */
export function upgradeCredentialFile(renders: CredentialRenders, ours: Buffer, rendered: Buffer): CredentialOutcome {
  const { path } = renders;
  const next = objectsOf(renders.new, path);
  const changes = keyChanges(objectsOf(renders.old, path), next);
  const outcome: CredentialOutcome = { keys_added: [], keys_removed: [], refusals: [] };
  if (changes.length === 0) return outcome;
  if (next.some((o) => o.scope === 'sops') || objectsOf(renders.old, path).some((o) => o.scope === 'sops')) {
    outcome.refusals.push(
      `${path}: the reference changes the keys of a SOPS-encrypted Secret (${changes.map((c) => c.id).join(', ')}); re-encrypting it needs the file's data key, which an upgrade does not have: change it with sops by hand`,
    );
    return outcome;
  }
  const mine = sealedDocs(ours.toString('utf8'), path);
  const theirs = sealedDocs(rendered.toString('utf8'), path);
  for (const change of changes) {
    const doc = mine.byId.get(change.id);
    if (!doc) {
      outcome.refusals.push(`${path}: the environment's file has no SealedSecret ${change.id} to change`);
      continue;
    }
    for (const key of change.removed) {
      if (doc.deleteIn(['spec', 'encryptedData', key])) outcome.keys_removed.push(`${path}: ${change.id}/${key}`);
    }
    for (const key of change.added) {
      if (doc.hasIn(['spec', 'encryptedData', key])) continue; // the customer sealed it already: theirs stays
      const problem = renders.sealedForCluster
        ? unaddable(renders.new, change.id, key, false)
        : `${change.id}/${key}: sealing a key the reference adds needs the cluster's certificate (--sealing-cert)`;
      if (problem) outcome.refusals.push(`${path}: ${problem}`);
      else {
        doc.setIn(['spec', 'encryptedData', key], theirs.byId.get(change.id)?.getIn(['spec', 'encryptedData', key]));
        outcome.keys_added.push(`${path}: ${change.id}/${key}`);
      }
    }
  }
  if (outcome.keys_added.length + outcome.keys_removed.length > 0)
    outcome.content = Buffer.from(stringifyDocuments(mine.docs));
  return outcome;
}

/** A credential file the reference adds: taken whole from the new render, when every key can be. */
export function addedCredentialFile(renders: CredentialRenders): CredentialOutcome {
  const { path } = renders;
  const objects = objectsOf(renders.new, path);
  const outcome: CredentialOutcome = { keys_added: [], keys_removed: [], refusals: [] };
  if (!renders.sealedForCluster) {
    const given = objects.some((o) => o.scope === 'sops') ? '--age-recipient' : '--sealing-cert';
    outcome.refusals.push(`${path}: a credential file the reference adds needs the cluster's ${given}`);
    return outcome;
  }
  for (const o of objects)
    for (const key of o.keys) {
      const problem = unaddable(renders.new, idOf(o), key, true);
      if (problem) outcome.refusals.push(`${path}: ${problem}`);
      else outcome.keys_added.push(`${path}: ${idOf(o)}/${key}`);
    }
  return outcome;
}

/** Keys of a credential file the reference removes, for the report. */
export function removedCredentialKeys(summary: GenerateSummary, path: string): string[] {
  return objectsOf(summary, path).flatMap((o) => o.keys.map((key) => `${path}: ${idOf(o)}/${key}`));
}
