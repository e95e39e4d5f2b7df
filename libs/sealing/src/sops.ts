import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { armor, Encrypter } from 'age-encryption';

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

export async function sopsEncrypt(doc: Record<string, unknown>, opts: SopsOptions): Promise<Record<string, unknown>> {
  if (opts.recipients.length === 0) throw new SopsError('at least one age recipient is needed');
  for (const r of opts.recipients)
    if (!isAgeRecipient(r)) throw new SopsError(`not an age recipient (age1...): ${String(r).slice(0, 12)}`);
  if ('sops' in doc) throw new SopsError('document is already encrypted');
  const dataKey = randomBytes(32);
  const regexSource = opts.encryptedRegex ?? FLUX_ENCRYPTED_REGEX;
  const regex = new RegExp(regexSource);
  const mac = createHash('sha512');
  const walk = (node: unknown, path: string[], encrypt: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, path, encrypt));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = walk(v, [...path, k], encrypt || regex.test(k));
      return out;
    }
    const leaf = node as Leaf;
    const bytes = bytesOf(leaf);
    mac.update(bytes);
    return encrypt ? encryptValue(dataKey, bytes, typeOf(leaf), path.join(':') + ':') : leaf;
  };
  const body = walk(doc, [], false) as Record<string, unknown>;
  const lastmodified = (opts.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const age = [];
  for (const recipient of opts.recipients) {
    const e = new Encrypter();
    e.addRecipient(recipient);
    age.push({ recipient, enc: armor.encode(await e.encrypt(dataKey)) });
  }
  return {
    ...body,
    sops: {
      age,
      lastmodified,
      mac: encryptValue(dataKey, Buffer.from(mac.digest('hex').toUpperCase()), 'str', lastmodified),
      encrypted_regex: regexSource,
      version: SOPS_VERSION,
    },
  };
}
