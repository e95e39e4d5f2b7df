import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { armor, Encrypter } from 'age-encryption';
import { stringify as stringifyYaml } from 'yaml';

/**
 * SOPS (getsops/sops v3) encryption of a Kubernetes manifest for age recipients, as `sops --encrypt
 * --age <recipients> --encrypted-regex '^(data|stringData)$'` writes it: a random 32-byte data key;
 * each value under a matching key becomes ENC[AES256_GCM,data,iv,tag,type] with a 32-byte IV and the
 * key path (joined by ':' plus a trailing ':') as associated data; the data key is wrapped for every
 * recipient as an armored age file; the MAC is SHA-512 over every value in document order, upper-case
 * hex, itself encrypted with the data key and `lastmodified` as associated data. Only public keys
 * ever reach this code; the age private key stays with the cluster.
 */
export const SOPS_VERSION = '3.9.4';
export const FLUX_ENCRYPTED_REGEX = '^(data|stringData)$';
const AGE_RECIPIENT = /^age1[02-9ac-hj-np-z]{58}$/;

export class SopsError extends Error {}

export function isAgeRecipient(value: unknown): value is string {
  return typeof value === 'string' && AGE_RECIPIENT.test(value);
}

type Leaf = string | number | boolean | null;

function typeOf(v: Leaf): string {
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'boolean') return 'bool';
  return 'str';
}

/** sops' ToBytes: what a value contributes to the MAC and to the ciphertext. */
function bytesOf(v: Leaf): Buffer {
  if (typeof v === 'boolean') return Buffer.from(v ? 'True' : 'False');
  if (v === null) return Buffer.alloc(0);
  return Buffer.from(String(v));
}

function encryptValue(key: Buffer, plaintext: Buffer, type: string, additionalData: string): string {
  const iv = randomBytes(32);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(additionalData));
  const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `ENC[AES256_GCM,data:${data.toString('base64')},iv:${iv.toString('base64')},tag:${cipher.getAuthTag().toString('base64')},type:${type}]`;
}

export interface SopsOptions {
  recipients: string[];
  now?: Date;
  encryptedRegex?: string;
}

/** Which leaves a document encrypts: those under a key matching `encryptedRegex`, or every leaf except under a key ending in `unencryptedSuffix` (sops' default). */
type Selection = { encryptedRegex: string } | { unencryptedSuffix: string };

/** sops' default for files encrypted without a regex: every value, except under keys ending in this suffix. */
export const UNENCRYPTED_SUFFIX = '_unencrypted';

function checkRecipients(recipients: string[]) {
  if (recipients.length === 0) throw new SopsError('at least one age recipient is needed');
  for (const r of recipients)
    if (!isAgeRecipient(r)) throw new SopsError(`not an age recipient (age1...): ${String(r).slice(0, 12)}`);
}

/**
 * The encrypted tree and its `sops` metadata: a fresh data key wrapped for every recipient, each
 * selected leaf encrypted with its key path as associated data, the MAC over every leaf in order.
 */
async function encryptTree(
  doc: Record<string, unknown>,
  recipients: string[],
  now: Date | undefined,
  selection: Selection,
): Promise<{ body: Record<string, unknown>; sops: Record<string, unknown> }> {
  checkRecipients(recipients);
  if ('sops' in doc) throw new SopsError('document is already encrypted');
  const dataKey = randomBytes(32);
  const selects =
    'encryptedRegex' in selection
      ? (k: string) => new RegExp(selection.encryptedRegex).test(k)
      : (k: string) => !k.endsWith(selection.unencryptedSuffix);
  // With a suffix, one key on the path leaves its whole subtree plain; with a regex, one key encrypts it.
  const inherit =
    'encryptedRegex' in selection
      ? (above: boolean, k: string) => above || selects(k)
      : (above: boolean, k: string) => above && selects(k);
  const mac = createHash('sha512');
  const walk = (node: unknown, path: string[], encrypt: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, path, encrypt));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = walk(v, [...path, k], inherit(encrypt, k));
      return out;
    }
    const leaf = node as Leaf;
    const bytes = bytesOf(leaf);
    mac.update(bytes);
    return encrypt ? encryptValue(dataKey, bytes, typeOf(leaf), path.join(':') + ':') : leaf;
  };
  const body = walk(doc, [], !('encryptedRegex' in selection)) as Record<string, unknown>;
  const lastmodified = (now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const age = [];
  for (const recipient of recipients) {
    const e = new Encrypter();
    e.addRecipient(recipient);
    age.push({ recipient, enc: armor.encode(await e.encrypt(dataKey)) });
  }
  const selected =
    'encryptedRegex' in selection
      ? { encrypted_regex: selection.encryptedRegex }
      : { unencrypted_suffix: selection.unencryptedSuffix };
  return {
    body,
    sops: {
      age,
      lastmodified,
      mac: encryptValue(dataKey, Buffer.from(mac.digest('hex').toUpperCase()), 'str', lastmodified),
      ...selected,
      version: SOPS_VERSION,
    },
  };
}

export async function sopsEncrypt(doc: Record<string, unknown>, opts: SopsOptions): Promise<Record<string, unknown>> {
  const { body, sops } = await encryptTree(doc, opts.recipients, opts.now, {
    encryptedRegex: opts.encryptedRegex ?? FLUX_ENCRYPTED_REGEX,
  });
  return { ...body, sops };
}

/** The formats sops reads and writes (`--input-type`), as kustomize-controller picks them by file name. */
export type SopsFormat = 'yaml' | 'json' | 'dotenv' | 'binary';

/**
 * A file's content encrypted the way `sops --encrypt --age <recipients> --input-type <format>` writes it
 * (no encrypted_regex: every value, sops' default `_unencrypted` suffix):
 * - yaml/json: a mapping (every leaf encrypted), with a `sops` mapping beside it;
 * - dotenv: `KEY=ENC[...]` lines, then the metadata flattened to `sops_*` lines (lists as
 *   `__list_<i>__`, maps as `__map_`, newlines as `\n`), as sops' dotenv store emits them;
 * - binary: the whole content as the value `data` of a JSON document, as sops' binary store does.
 */
export async function sopsEncryptFile(
  content: Record<string, unknown> | Record<string, string> | Buffer,
  format: SopsFormat,
  opts: Omit<SopsOptions, 'encryptedRegex'>,
): Promise<Buffer> {
  const selection = { unencryptedSuffix: UNENCRYPTED_SUFFIX };
  if (format === 'binary') {
    if (!Buffer.isBuffer(content)) throw new SopsError('binary content must be bytes');
    const { body, sops } = await encryptTree({ data: content.toString('utf8') }, opts.recipients, opts.now, selection);
    return Buffer.from(JSON.stringify({ ...body, sops }, null, '\t') + '\n');
  }
  if (Buffer.isBuffer(content)) throw new SopsError(`${format} content must be a mapping`);
  const { body, sops } = await encryptTree(content, opts.recipients, opts.now, selection);
  if (format === 'json') return Buffer.from(JSON.stringify({ ...body, sops }, null, '\t') + '\n');
  if (format === 'yaml') return Buffer.from(stringifyYaml({ ...body, sops }, { lineWidth: 0 }));
  const lines = Object.entries(body).map(([k, v]) => {
    if (typeof v !== 'string') throw new SopsError(`dotenv value ${k} must be text`);
    return `${k}=${v}`;
  });
  const metadata = Object.entries(flattenMetadata(sops)).map(([k, v]) => `sops_${k}=${v.replace(/\n/g, '\\n')}`);
  return Buffer.from([...lines, ...metadata.sort()].join('\n') + '\n');
}

/** sops' FlattenMetadata: a top-level key, then `__map_<key>` for each nested key and `__list_<i>` for each list item. */
function flattenMetadata(metadata: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (node: unknown, path: string) => {
    if (Array.isArray(node)) node.forEach((item, i) => visit(item, `${path}__list_${i}`));
    else if (node !== null && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) visit(v, `${path}__map_${k}`);
    else out[path] = String(node);
  };
  for (const [k, v] of Object.entries(metadata)) visit(v, k);
  return out;
}
