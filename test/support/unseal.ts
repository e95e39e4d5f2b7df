import { constants, createDecipheriv, privateDecrypt } from 'node:crypto';

/**
 * Opens a sealed value the way the sealed-secrets controller does (pkg/crypto HybridDecrypt),
 * written independently of the production sealing code so that the tests check it rather than echo it.
 */
export function unseal(privateKeyPem: string, label: string, blob: string): Buffer {
  const bytes = Buffer.from(blob, 'base64');
  const rsaLength = bytes.readUInt16BE(0);
  const sessionKey = privateDecrypt(
    {
      key: privateKeyPem,
      padding: constants.RSA_PKCS1_OAEP_PADDING,
      oaepHash: 'sha256',
      oaepLabel: Buffer.from(label),
    },
    bytes.subarray(2, 2 + rsaLength),
  );
  const body = bytes.subarray(2 + rsaLength);
  const decipher = createDecipheriv('aes-256-gcm', sessionKey, Buffer.alloc(12));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
}

/** Opens every value of a SealedSecret manifest, choosing the label from its scope annotations. */
export function unsealManifest(privateKeyPem: string, sealed: any): Record<string, string> {
  const annotations = sealed.metadata?.annotations ?? {};
  const { name, namespace } = sealed.metadata;
  const label =
    annotations['sealedsecrets.bitnami.com/cluster-wide'] === 'true'
      ? ''
      : annotations['sealedsecrets.bitnami.com/namespace-wide'] === 'true'
        ? namespace
        : `${namespace}/${name}`;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(sealed.spec.encryptedData))
    out[k] = unseal(privateKeyPem, label, String(v)).toString('utf8');
  return out;
}
