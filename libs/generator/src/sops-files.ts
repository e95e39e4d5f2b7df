/**
 * SOPS-encrypted files as kustomize-controller reads them for a kustomize `secretGenerator`: the
 * format from the file name (sops' `FormatForPath`), and whether a file is encrypted with every
 * value protected. Key names are readable without any key, values never are.
 */
import { parse as parseYaml } from 'yaml';
import type { SopsFormat } from '#libs/sealing/sops';
import { UNENCRYPTED_SUFFIX } from '#libs/sealing/sops';

export type { SopsFormat };

/** sops' FormatForPath by extension (`.ini` has no place in a Secret generator here): anything else is binary. */
export function formatForPath(path: string): SopsFormat | 'ini' {
  if (/\.ya?ml$/.test(path)) return 'yaml';
  if (path.endsWith('.json')) return 'json';
  if (path.endsWith('.env')) return 'dotenv';
  if (path.endsWith('.ini')) return 'ini';
  return 'binary';
}

const ENC_VALUE = /^ENC\[AES256_GCM,data:[^,]*,iv:[^,]+,tag:[^,]+,type:\w+\]$/;
export const isEncValue = (v: unknown) => typeof v === 'string' && ENC_VALUE.test(v);

/** A parsed encrypted file: its values (dotenv: KEY -> value; yaml/json: the document; binary: `{data}`) and metadata. */
export interface SopsFile {
  format: SopsFormat;
  /** The document without its metadata (dotenv: the KEY=value pairs in order). */
  body: Record<string, unknown>;
  /** The age recipients it is encrypted for. */
  recipients: string[];
}

/** dotenv lines as sops' dotenv store reads them: `KEY=value`, `#` comments and blank lines skipped. */
function dotenvPairs(text: string): Array<[string, string]> {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))
    .map((line) => {
      const eq = line.indexOf('=');
      return eq < 0 ? [line.trim(), ''] : [line.slice(0, eq).trim(), line.slice(eq + 1)];
    });
}

/** The encrypted file, or null when the text is no SOPS file of this format with a MAC (plaintext, or unreadable). */
export function readSopsFile(text: string, format: SopsFormat): SopsFile | null {
  if (format === 'dotenv') {
    const pairs = dotenvPairs(text);
    const meta = new Map(pairs.filter(([k]) => k.startsWith('sops_')));
    if (!isEncValue(meta.get('sops_mac'))) return null;
    const recipients = [...meta].filter(([k]) => /^sops_age__list_\d+__map_recipient$/.test(k)).map(([, v]) => v);
    return { format, body: Object.fromEntries(pairs.filter(([k]) => !k.startsWith('sops_'))), recipients };
  }
  let doc: any;
  try {
    doc = format === 'yaml' ? parseYaml(text) : JSON.parse(text);
  } catch {
    return null;
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || !isEncValue(doc.sops?.mac)) return null;
  const { sops, ...body } = doc;
  if (format === 'binary' && typeof body.data !== 'string') return null;
  const recipients = Array.isArray(sops.age) ? sops.age.map((a: any) => String(a?.recipient)) : [];
  return { format, body, recipients };
}

/**
 * Whether every value of an encrypted file is protected: a value sops left in clear (under a key
 * with the `_unencrypted` suffix, or outside an `encrypted_regex`) is only allowed for the suffix.
 */
export function allValuesEncrypted(file: SopsFile): boolean {
  const visit = (node: unknown, clear: boolean): boolean => {
    if (Array.isArray(node)) return node.every((n) => visit(n, clear));
    if (node !== null && typeof node === 'object')
      return Object.entries(node).every(([k, v]) => visit(v, clear || k.endsWith(UNENCRYPTED_SUFFIX)));
    return clear || isEncValue(node);
  };
  return visit(file.body, false);
}

/** Leaves of a document by path (array items by index), outside keys left in clear by the suffix. */
export function encryptedLeaves(body: unknown): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  const visit = (node: unknown, path: Array<string | number>) => {
    if (Array.isArray(node)) node.forEach((n, i) => visit(n, [...path, i]));
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) if (!k.endsWith(UNENCRYPTED_SUFFIX)) visit(v, [...path, k]);
    } else out.push(path);
  };
  visit(body, []);
  return out;
}

/**
 * One value of a Secret that kustomize built from a generator over SOPS files, before
 * kustomize-controller decrypts it: an `ENC[...]` value or `sops_*` metadata line of an encrypted
 * dotenv (`envs:`), or a whole encrypted file (`files:`) with every value protected.
 */
export function isEncryptedGeneratedValue(key: string, text: string): boolean {
  if (isEncValue(text) || key.startsWith('sops_')) return true;
  for (const format of ['yaml', 'json', 'dotenv'] as const) {
    const file = readSopsFile(text, format);
    if (file) return allValuesEncrypted(file);
  }
  return false;
}
