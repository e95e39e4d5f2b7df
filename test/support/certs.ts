import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as forge from 'node-forge';

export interface TestCert {
  certPem: string;
  privateKeyPem: string;
}

/** A self-signed RSA certificate like the sealed-secrets controller's, with a chosen validity window. */
export function makeRsaCert(opts: { bits?: number; notBefore?: Date; notAfter?: Date } = {}): TestCert {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: opts.bits ?? 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(privateKeyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = '01' + forge.util.bytesToHex(forge.random.getBytesSync(8));
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.now() - 3600_000);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 10 * 365 * 86400_000);
  const subject = [
    { name: 'commonName', value: 'sealed-secret' },
    { name: 'organizationName', value: 'sealed-secret' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.sign(key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), privateKeyPem };
}

/** An EC certificate: valid PEM, wrong key type for sealed-secrets. */
export function makeEcCert(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ec-cert-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'k.pem'),
      '-out',
      join(dir, 'c.pem'),
      '-days',
      '30',
      '-subj',
      '/CN=ec',
    ],
    { stdio: 'ignore' },
  );
  return readFileSync(join(dir, 'c.pem'), 'utf8');
}

export interface TestTls {
  /** Folder holding ca.pem, server.pem, server-key.pem (and whatever else a test writes there). */
  dir: string;
  caFile: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A private CA and a server certificate it signed for 127.0.0.1 and localhost, made with the openssl command line. */
export function makeTestTls(commonName = '127.0.0.1'): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'test-tls-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=gitops-scaffolder test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server-key.pem',
    '-out',
    'server.csr',
    '-subj',
    `/CN=${commonName}`,
  );
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    caPem: read('ca.pem'),
    certPem: read('server.pem'),
    keyPem: read('server-key.pem'),
  };
}
