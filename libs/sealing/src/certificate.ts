import { X509Certificate, KeyObject } from 'node:crypto';

/** A sealing certificate failed the checks kubeseal makes (PEM, RSA public key, not expired). */
export class CertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateError';
  }
}

export interface SealingCertificate {
  /** The PEM as given (public material: safe to store, never a secret). */
  readonly pem: string;
  readonly publicKey: KeyObject;
  /** SHA-256 over the DER certificate, lowercase hex with colons, as `openssl x509 -fingerprint -sha256` prints it. */
  readonly fingerprintSha256: string;
  readonly notAfter: Date;
  readonly subject: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * Parses and checks a sealed-secrets controller certificate the way kubeseal does:
 * the first certificate in the PEM, an RSA public key, and not past NotAfter.
 */
export function parseSealingCertificate(pem: string, now: Date = new Date()): SealingCertificate {
  if (typeof pem !== 'string' || pem.length === 0) throw new CertificateError('certificate is empty');
  const block = PEM_CERTIFICATE.exec(pem);
  if (!block) throw new CertificateError('certificate is not a PEM CERTIFICATE block');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(block[0]);
  } catch {
    throw new CertificateError('certificate PEM does not decode to an X.509 certificate');
  }
  const publicKey = cert.publicKey;
  if (publicKey.asymmetricKeyType !== 'rsa') {
    throw new CertificateError(
      `certificate key is ${publicKey.asymmetricKeyType ?? 'unknown'}, sealed-secrets needs RSA`,
    );
  }
  const notAfter = new Date(cert.validTo);
  if (!(notAfter.getTime() > now.getTime())) {
    throw new CertificateError(`certificate expired at ${notAfter.toISOString()}`);
  }
  return {
    pem: block[0] + '\n',
    publicKey,
    fingerprintSha256: cert.fingerprint256.toLowerCase(),
    notAfter,
    subject: cert.subject,
  };
}
