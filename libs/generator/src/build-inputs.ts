import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { SEALED_BY_ANNOTATION } from '#libs/sealing';
import { KUSTOMIZATION_FILES } from './reference';
import { readBodies } from './yaml-docs';
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
    files.set(abs, createHash('sha256').update(whatDecidesBuilds(bytes)).digest('base64'));
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

const SEALED_SECRET = /^kind:\s*SealedSecret\s*$/m;
/**
 * A sealed value (base64, as sealing writes it) and the certificate's fingerprint: only these, so a value of another
 * shape (a YAML collection, an alias, a value the schema check refuses) is never taken for one that passed.
 */
const SEALED_VALUE = /^(\s*[^\s:]+):\s+[A-Za-z0-9+/]+={0,2}$/;
const SEALED_FOR = new RegExp(
  `^(\\s*${SEALED_BY_ANNOTATION.replace(/[./]/g, '\\$&')}:)\\s+[0-9a-f]{2}(?::[0-9a-f]{2})+$`,
);
/**
 * A SOPS value, the file's data key as an age recipient holds it (every line at the block's indentation), and when
 * it was encrypted: only in the shapes sops writes them, so no text that changes the YAML around them (a `: `, a
 * line at another indentation, an unclosed bracket) is ever taken for one that passed.
 */
const SOPS_VALUE = /ENC\[AES256_GCM,data:[A-Za-z0-9+/=]*,iv:[A-Za-z0-9+/=]+,tag:[A-Za-z0-9+/=]+,type:[a-z]+\]/g;
const SOPS_DATA_KEY =
  /^([ \t]*)-----BEGIN AGE ENCRYPTED FILE-----\n(?:\1[A-Za-z0-9+/=]+\n)*?\1-----END AGE ENCRYPTED FILE-----$/gm;
const SOPS_TIME = /^(\s*(?:sops_)?lastmodified\s*[:=])\s*"?\d{4}-\d\d-\d\dT[\d:.]+Z"?$/gm;

/**
 * What of a file decides a build and its checks. Ciphertext is opaque to kustomize and to every check of a build (a
 * kept build serves checks, never output): a SealedSecret's sealed values and the certificate it records they were
 * sealed for; a SOPS file's encrypted values, its data key as each recipient holds it, and when it was encrypted. The
 * same Secrets protected again, with fresh credentials or for another certificate (the full pass after the infra
 * pass's rehearsal of it), build the same. Anything else in such a file (keys, names, recipients, the MAC's place),
 * and every other file, counts byte for byte; a sealed value spread over lines is kept as it is (a difference the
 * digest sees, never one it hides).
 */
export function whatDecidesBuilds(bytes: Buffer): Buffer | string {
  if (bytes.length > MAX_NORMALISED_BYTES) return bytes;
  const text = bytes.toString('utf8');
  if (SEALED_SECRET.test(text)) return withoutSealedValues(text);
  if (text.includes('ENC[AES256_GCM,')) return withoutSopsCiphertext(text);
  return bytes;
}

function withoutSealedValues(text: string): string {
  let sealedIndent = -1;
  return text
    .split('\n')
    .map((line) => {
      const indent = line.search(/\S/);
      if (sealedIndent >= 0 && indent > sealedIndent) return line.replace(SEALED_VALUE, '$1: <sealed>');
      if (indent >= 0) sealedIndent = /^\s*encryptedData:\s*$/.test(line) ? indent : -1;
      return line.replace(SEALED_FOR, '$1 <certificate>');
    })
    .join('\n');
}

function withoutSopsCiphertext(text: string): string {
  return text
    .replace(SOPS_VALUE, 'ENC[<encrypted>]')
    .replace(SOPS_DATA_KEY, '$1-----<age data key>-----')
    .replace(SOPS_TIME, '$1 <time>');
}

/** Files past this size are digested as they are (no generated SealedSecret is near it). */
const MAX_NORMALISED_BYTES = 1024 * 1024;

function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (value !== null && typeof value === 'object')
    for (const child of Object.values(value)) yield* stringsIn(child);
}
