/**
 * No byte of the reference cluster's ciphertext reaches a new cluster. A reference keeps files
 * encrypted for its own keys that no Flux Kustomization applies (onedr0p/home-ops' `sops-age`
 * private key Secret and Talos machine secrets under `bootstrap/`) or that no rule regenerates; the
 * new cluster could never open them, and carrying them hands the reference's secrets (and, for the
 * age key, every other file of the reference) to whoever holds the new repository. Such a file is
 * left out and listed (`omitted_encrypted`); one a kustomization of the new cluster lists is refused.
 */
import { posix } from 'node:path';
import type { Context, OmittedEncrypted } from './context';

export type { OmittedEncrypted };
import { GeneratorInputError } from './errors';
import { KUSTOMIZATION_FILES, listFiles } from './reference';
import { isRepoFile, readRepoFile } from './repo-files';
import { readBodies } from './yaml-docs';

const SOPS_VALUE = /ENC\[AES256_GCM,data:[^\]\s]*\]/g;
const ARMORED = /-----BEGIN (AGE ENCRYPTED FILE|PGP MESSAGE)-----[\s\S]*?-----END \1-----/g;
const AGE_BINARY = 'age-encryption.org/v1\n';
const AGE_RECIPIENT = /\bage1[02-9ac-hj-np-z]{58}\b/g;

/** A file's YAML documents, or none when it is no YAML (a JSON profile, a binary file): it holds no SealedSecret then. */
function bodiesOf(text: string, file: string): readonly any[] {
  try {
    return readBodies(text, file);
  } catch {
    return [];
  }
}

/** An armored block as a token: its lines without the YAML indentation a `sops:` block gives them. */
const armoredToken = (block: string) => block.replace(/\s+/g, '');

/** The encrypted values of a SealedSecret document (spec.encryptedData, and the older spec.data). */
function sealedValues(text: string): string[] {
  if (!/\bkind:\s*["']?SealedSecret\b/.test(text)) return [];
  return bodiesOf(text, 'SealedSecret').flatMap((body: any) => {
    if (body?.kind !== 'SealedSecret') return [];
    const values = { ...(body.spec?.encryptedData ?? {}) };
    if (typeof body.spec?.data === 'string') values[''] = body.spec.data;
    return Object.values(values).filter((v): v is string => typeof v === 'string' && v.length > 0);
  });
}

/**
 * The ciphertext a file holds, as tokens that are the same wherever the bytes are copied (SOPS
 * values, armored age or PGP blocks, SealedSecret values, a binary age file as a whole).
 */
export function ciphertextTokens(content: Buffer): string[] {
  const text = content.toString('utf8');
  if (text.startsWith(AGE_BINARY)) return [content.toString('base64')];
  return [...(text.match(SOPS_VALUE) ?? []), ...(text.match(ARMORED) ?? []).map(armoredToken), ...sealedValues(text)];
}

/** What kind of ciphertext a file holds and for which keys, in words (public keys only), or undefined. */
export function ciphertextKind(content: Buffer): string | undefined {
  const text = content.toString('utf8');
  const recipients = [...new Set(text.match(AGE_RECIPIENT) ?? [])];
  const forKeys = recipients.length > 0 ? ` for ${recipients.join(', ')}` : '';
  if (text.includes('ENC[AES256_GCM,')) return `SOPS-encrypted${forKeys}`;
  if (text.startsWith(AGE_BINARY) || text.includes('-----BEGIN AGE ENCRYPTED FILE-----'))
    return `age-encrypted${forKeys}`;
  if (text.includes('-----BEGIN PGP MESSAGE-----')) return 'PGP-encrypted';
  if (sealedValues(text).length > 0) return "a SealedSecret sealed for the reference cluster's controller";
  return undefined;
}

/**
 * Whether `content`, written for the new cluster, carries ciphertext of the reference file it was
 * rendered from: regenerated Secrets (and files an earlier pass encrypted for the new cluster) share
 * no token with it.
 */
function carriesReferenceCiphertext(content: Buffer, reference: Buffer): boolean {
  const ours = ciphertextTokens(content);
  if (ours.length === 0) return false;
  const theirs = new Set(ciphertextTokens(reference));
  return ours.some((token) => theirs.has(token));
}

/** The resources, patches and components a kustomization file of the folder names, as paths relative to the folder. */
function listedPaths(files: Map<string, Buffer>): Map<string, string> {
  const listed = new Map<string, string>();
  for (const [rel, content] of files) {
    if (!KUSTOMIZATION_FILES.includes(posix.basename(rel))) continue;
    const body: any = bodiesOf(content.toString('utf8'), rel)[0] ?? {};
    const entries = [
      ...(Array.isArray(body.resources) ? body.resources : []),
      ...(Array.isArray(body.patchesStrategicMerge) ? body.patchesStrategicMerge : []),
      ...(Array.isArray(body.patches) ? body.patches.map((p: any) => p?.path) : []),
    ];
    for (const entry of entries.filter((e): e is string => typeof e === 'string'))
      listed.set(posix.normalize(posix.join(posix.dirname(rel), entry)), rel);
  }
  return listed;
}

/**
 * Leaves out of a folder about to be written (`files`, relative to `dir`, rendered from the
 * reference folder `referenceDir`) every file that still holds the reference's ciphertext, listing
 * it in the summary. A kustomization of the folder that lists such a file would break without it:
 * refused, naming both.
 */
export function omitReferenceCiphertext(ctx: Context, dir: string, files: Map<string, Buffer>, referenceDir: string) {
  const listed = listedPaths(files);
  for (const [rel, content] of files) {
    const referencePath = `${referenceDir}/${rel}`;
    if (!isRepoFile(ctx.referenceRoot, referencePath)) continue;
    if (!carriesReferenceCiphertext(content, readRepoFile(ctx.referenceRoot, referencePath))) continue;
    const kind = ciphertextKind(content) ?? 'encrypted';
    const by = listed.get(rel);
    if (by)
      throw new GeneratorInputError(
        `${referencePath} is ${kind}, the reference cluster's keys, and ${referenceDir}/${by} lists it: the generator regenerates only Secrets, so the new cluster cannot get it; make it a Secret, or take it out of ${referenceDir}/${by}`,
      );
    files.delete(rel);
    omit(ctx, referencePath, kind);
  }
}

function omit(ctx: Context, path: string, kind: string) {
  if (ctx.summary.omitted_encrypted.some((o) => o.path === path)) return;
  ctx.summary.omitted_encrypted.push({
    path,
    reason: `${kind}; nothing the new cluster applies regenerates it, so it is left out (the new cluster needs its own, made with its own keys)`,
  });
}

/**
 * The files of a shared reference folder copied into another repository that hold ciphertext
 * (relative to the folder): every one of them is the reference's, so each is left out and listed.
 */
export function encryptedInSharedCopy(ctx: Context, root: string, dir: string): string[] {
  const out: string[] = [];
  for (const rel of listFiles(posix.join(root, dir))) {
    const kind = ciphertextKind(readRepoFile(root, `${dir}/${rel}`));
    if (!kind) continue;
    out.push(rel);
    omit(ctx, `${dir}/${rel}`, kind);
  }
  return out;
}
