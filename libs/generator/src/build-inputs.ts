import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { SEALED_BY_ANNOTATION } from '#libs/sealing';
import { KUSTOMIZATION_FILES } from './reference';
import { Document, isMap, isScalar, isSeq } from 'yaml';
import { readBodies, sharedDocuments } from './yaml-docs';
import { readRepoFile } from './repo-files';

/** Beyond this many files a build's inputs are not digested (the build runs): reading a whole fleet to skip one build costs more than it saves. */
const MAX_INPUT_FILES = 5000;

/**
 * A digest of everything a kustomize build of `absDir` can read, or undefined when that is more than
 * MAX_INPUT_FILES files. Conservative, not exact: every file below each kustomization folder the
 * build reaches (a patch or generator file is below its kustomization unless loading is loose), and
 * every path any string of a kustomization names that exists (resources, components, bases, patches,
 * generator files, wherever they point), followed into the kustomizations found there. Files are
 * named relative to `absDir`, so two builds of the same tree in different staging folders agree; a
 * string that only happens to name a file adds an input, never hides one.
 */
export function buildInputsDigest(absDir: string, settings: readonly string[]): string | undefined {
  const files = new Map<string, string>();
  const seenDirs = new Set<string>();
  const addFile = (abs: string) => {
    if (files.has(abs)) return;
    // Bounded and never through a link (refused: no digest, so the build runs uncached and its sandbox decides).
    const bytes = readRepoFile(dirname(abs), basename(abs));
    files.set(abs, createHash('sha256').update(whatDecidesBuilds(bytes, abs)).digest('base64'));
    if (KUSTOMIZATION_FILES.some((name) => abs.endsWith(sep + name))) followStrings(abs, bytes.toString('utf8'));
  };
  const addDir = (abs: string) => {
    // A folder below one already read is read already.
    if ([...seenDirs].some((d) => abs === d || abs.startsWith(d + sep))) return;
    seenDirs.add(abs);
    readTree(abs);
  };
  const readTree = (abs: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const child = join(abs, entry.name);
      const stat = statSync(child, { throwIfNoEntry: false });
      if (stat?.isDirectory()) readTree(child);
      else if (stat?.isFile()) addFile(child);
      if (files.size > MAX_INPUT_FILES) throw new Error('too many inputs');
    }
  };
  const followStrings = (kfile: string, text: string) => {
    const dir = resolve(kfile, '..');
    let bodies: readonly unknown[];
    try {
      bodies = readBodies(text, kfile);
    } catch {
      return; // kustomize refuses it: the build fails, and a failed build is never kept
    }
    for (const value of stringsIn(bodies)) {
      for (const candidate of [value, value.slice(value.indexOf('=') + 1)]) {
        if (candidate === '' || candidate.includes('\n') || candidate.length > 1024) continue;
        const target = resolve(dir, candidate.trim());
        const stat = statSync(target, { throwIfNoEntry: false });
        if (stat?.isDirectory()) addDir(target);
        else if (stat?.isFile()) addFile(target);
      }
    }
  };
  try {
    addDir(absDir);
  } catch {
    return undefined; // too many files, or a tree this walk cannot read (a loop of links): the build runs, and kustomize says
  }
  const digest = createHash('sha256');
  for (const s of settings) digest.update(`${s}\0`);
  for (const [abs, sha] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    digest.update(`${relative(absDir, abs)}\0${sha}\0`);
  return digest.digest('base64');
}

/** Ciphertext as sealing and sops write it: a sealed value, a certificate's fingerprint, a SOPS value, its time and data key. */
const SEALED_VALUE = /^[A-Za-z0-9+/]+={0,2}$/;
const FINGERPRINT = /^[0-9a-f]{2}(?::[0-9a-f]{2})+$/;
const SOPS_VALUE = /^ENC\[AES256_GCM,data:[A-Za-z0-9+/=]*,iv:[A-Za-z0-9+/=]+,tag:[A-Za-z0-9+/=]+,type:[a-z]+\]$/;
const SOPS_TIME = /^\d{4}-\d\d-\d\dT[\d:.]+Z$/;
const AGE_ARMOR = /^-----BEGIN AGE ENCRYPTED FILE-----\n[A-Za-z0-9+/=\n]+-----END AGE ENCRYPTED FILE-----\n?$/;

/**
 * What of a file decides a build and its checks. Ciphertext is opaque to kustomize and to every check of a build (a
 * kept build serves checks, never output): a SealedSecret's sealed values and the certificate it records they were
 * sealed for; a SOPS document's encrypted values, its MAC, its data key as each age recipient holds it, and when it
 * was encrypted. The same Secrets protected again, with fresh credentials or for another certificate (the full pass
 * after the infra pass's rehearsal of it), build the same. The places are found by parsing, and only string scalars
 * in the exact shapes sealing and sops write are left out (their source text, nothing around it): two files that
 * digest the same differ only in such strings, so neither can be a file that does not parse, a different structure or
 * a value of another type checked as one that passed. Every other byte, and every other file, counts.
 */
export function whatDecidesBuilds(bytes: Buffer, file = 'a build input'): Buffer | string {
  if (bytes.length > MAX_NORMALISED_BYTES) return bytes;
  const text = bytes.toString('utf8');
  if (!text.includes('SealedSecret') && !text.includes('ENC[AES256_GCM,')) return bytes;
  let docs: readonly Document[];
  try {
    docs = sharedDocuments(text, file);
  } catch {
    return bytes; // kustomize refuses it: the build fails, and a failed build is never kept
  }
  const spans = docs.flatMap(ciphertextSpans).sort((a, b) => a[0] - b[0]);
  if (spans.length === 0) return bytes;
  let masked = '';
  let at = 0;
  for (const [start, end] of spans) {
    masked += `${text.slice(at, start)}\u0000`;
    at = end;
  }
  return masked + text.slice(at);
}

/** The source ranges of one document's ciphertext strings (see whatDecidesBuilds). */
function ciphertextSpans(doc: Document): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const take = (node: unknown, shape: RegExp) => {
    if (isScalar(node) && typeof node.value === 'string' && shape.test(node.value) && node.range)
      spans.push([node.range[0], node.range[1]]);
  };
  if (doc.get('kind') === 'SealedSecret') {
    const sealed = doc.getIn(['spec', 'encryptedData'], true);
    if (isMap(sealed)) for (const pair of sealed.items) take(pair.value, SEALED_VALUE);
    take(doc.getIn(['metadata', 'annotations', SEALED_BY_ANNOTATION], true), FINGERPRINT);
  }
  const sops = doc.get('sops', true);
  if (isMap(sops)) {
    visitScalars(doc.contents, (node) => take(node, SOPS_VALUE));
    take(sops.get('lastmodified', true), SOPS_TIME);
    const age = sops.get('age', true);
    if (isSeq(age))
      for (const recipient of age.items) if (isMap(recipient)) take(recipient.get('enc', true), AGE_ARMOR);
  }
  return spans;
}

function visitScalars(node: unknown, visit: (node: unknown) => void, depth = 0): void {
  if (depth > 64) return;
  if (isMap(node)) for (const pair of node.items) visitScalars(pair.value, visit, depth + 1);
  else if (isSeq(node)) for (const item of node.items) visitScalars(item, visit, depth + 1);
  else visit(node);
}

/** Files past this size are digested as they are (no generated SealedSecret is near it). */
const MAX_NORMALISED_BYTES = 1024 * 1024;

function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (value !== null && typeof value === 'object')
    for (const child of Object.values(value)) yield* stringsIn(child);
}
