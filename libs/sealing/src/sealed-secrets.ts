import { constants, createCipheriv, publicEncrypt, randomBytes } from 'node:crypto';
import type { SealingCertificate } from './certificate';

/** How widely a SealedSecret may be renamed or moved and still open (sealed-secrets' scopes). */
export type SealingScope = 'strict' | 'namespace-wide' | 'cluster-wide';

export const SEALING_SCOPES: readonly SealingScope[] = ['strict', 'namespace-wide', 'cluster-wide'];

/** The OAEP label binds the ciphertext to where it may be opened. */
export function sealingLabel(scope: SealingScope, namespace: string, name: string): Buffer {
  switch (scope) {
    case 'strict':
      return Buffer.from(`${namespace}/${name}`);
    case 'namespace-wide':
      return Buffer.from(namespace);
    case 'cluster-wide':
      return Buffer.alloc(0);
  }
}

/** Annotations the controller reads from the SealedSecret's own metadata to pick the label. */
export function scopeAnnotations(scope: SealingScope): Record<string, string> {
  if (scope === 'namespace-wide') return { 'sealedsecrets.bitnami.com/namespace-wide': 'true' };
  if (scope === 'cluster-wide') return { 'sealedsecrets.bitnami.com/cluster-wide': 'true' };
  return {};
}

const ZERO_NONCE = Buffer.alloc(12);

/**
 * Hybrid encryption exactly as sealed-secrets' pkg/crypto HybridEncrypt: a fresh AES-256 session key,
 * RSA-OAEP(SHA-256, label) over it, AES-GCM with a zero nonce (safe: each key seals one value) over the value.
 * Output: uint16 BE length of the RSA block || RSA block || GCM ciphertext || tag, base64.
 */
export function sealValue(cert: SealingCertificate, label: Buffer, value: Buffer): string {
  const sessionKey = randomBytes(32);
  const rsaBlock = publicEncrypt(
    { key: cert.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: label },
    sessionKey,
  );
  const cipher = createCipheriv('aes-256-gcm', sessionKey, ZERO_NONCE);
  const body = Buffer.concat([cipher.update(value), cipher.final(), cipher.getAuthTag()]);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(rsaBlock.length);
  return Buffer.concat([length, rsaBlock, body]).toString('base64');
}

export interface SecretToSeal {
  name: string;
  namespace: string;
  type: string;
  labels?: Record<string, string>;
  /** Extra annotations for the SealedSecret's own metadata (never secret values). */
  annotations?: Record<string, string>;
  data: Record<string, Buffer>;
}

export const SEALED_BY_ANNOTATION = 'gitops-scaffolder.io/sealing-cert-sha256';

/** Builds a `bitnami.com/v1alpha1` SealedSecret manifest the way `kubeseal` writes it. */
export function buildSealedSecret(secret: SecretToSeal, cert: SealingCertificate, scope: SealingScope = 'strict') {
  const label = sealingLabel(scope, secret.namespace, secret.name);
  const encryptedData: Record<string, string> = {};
  for (const key of Object.keys(secret.data).sort()) encryptedData[key] = sealValue(cert, label, secret.data[key]);
  const annotations = {
    ...scopeAnnotations(scope),
    [SEALED_BY_ANNOTATION]: cert.fingerprintSha256,
    ...secret.annotations,
  };
  const templateMetadata: Record<string, unknown> = { name: secret.name, namespace: secret.namespace };
  if (secret.labels && Object.keys(secret.labels).length > 0) templateMetadata.labels = secret.labels;
  if (Object.keys(scopeAnnotations(scope)).length > 0) templateMetadata.annotations = scopeAnnotations(scope);
  return {
    apiVersion: 'bitnami.com/v1alpha1',
    kind: 'SealedSecret',
    metadata: { name: secret.name, namespace: secret.namespace, annotations },
    spec: { encryptedData, template: { metadata: templateMetadata, type: secret.type } },
  };
}
