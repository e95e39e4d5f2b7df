import { buildSealedSecret, CertificateError, parseSealingCertificate, sealingLabel, sealValue } from '#libs/sealing';
import { makeEcCert, makeRsaCert } from '../support/certs';
import { unseal, unsealManifest } from '../support/unseal';

describe('sealed-secrets compatible sealing', () => {
  const rsa = makeRsaCert();

  it('seals a value that the controller algorithm opens with the strict label', () => {
    const cert = parseSealingCertificate(rsa.certPem);
    const blob = sealValue(cert, sealingLabel('strict', 'data', 'pg'), Buffer.from('s3cret-value'));
    expect(unseal(rsa.privateKeyPem, 'data/pg', blob).toString()).toBe('s3cret-value');
    expect(() => unseal(rsa.privateKeyPem, 'data/other', blob)).toThrow();
  });

  it('uses a fresh session key per value', () => {
    const cert = parseSealingCertificate(rsa.certPem);
    const label = sealingLabel('strict', 'a', 'b');
    expect(sealValue(cert, label, Buffer.from('x'))).not.toBe(sealValue(cert, label, Buffer.from('x')));
  });

  it('starts every RSA-4096 blob with 02 00 as kubeseal output does', () => {
    const big = makeRsaCert({ bits: 4096 });
    const blob = Buffer.from(
      sealValue(parseSealingCertificate(big.certPem), Buffer.alloc(0), Buffer.from('v')),
      'base64',
    );
    expect([...blob.subarray(0, 2)]).toEqual([0x02, 0x00]);
  });

  it.each([
    ['strict', 'ns/name', {}],
    ['namespace-wide', 'ns', { 'sealedsecrets.bitnami.com/namespace-wide': 'true' }],
    ['cluster-wide', '', { 'sealedsecrets.bitnami.com/cluster-wide': 'true' }],
  ] as const)('builds a %s SealedSecret with the matching label and annotations', (scope, label, annotations) => {
    const cert = parseSealingCertificate(rsa.certPem);
    const manifest = buildSealedSecret(
      { name: 'name', namespace: 'ns', type: 'Opaque', data: { a: Buffer.from('1'), b: Buffer.from('2') } },
      cert,
      scope,
    );
    expect(manifest.apiVersion).toBe('bitnami.com/v1alpha1');
    expect(manifest.kind).toBe('SealedSecret');
    expect(manifest.metadata.annotations).toMatchObject(annotations);
    expect(unseal(rsa.privateKeyPem, label, manifest.spec.encryptedData.a).toString()).toBe('1');
    expect(unsealManifest(rsa.privateKeyPem, manifest)).toEqual({ a: '1', b: '2' });
  });

  it('reports the fingerprint and expiry of a good certificate', () => {
    const cert = parseSealingCertificate(rsa.certPem);
    expect(cert.fingerprintSha256).toMatch(/^([0-9a-f]{2}:){31}[0-9a-f]{2}$/);
    expect(cert.notAfter.getTime()).toBeGreaterThan(Date.now());
  });

  it.each([
    ['not PEM', 'hello', /not a PEM/],
    ['a broken PEM', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', /does not decode/],
    ['an EC key', makeEcCert(), /needs RSA/],
    [
      'expired',
      makeRsaCert({ notBefore: new Date(Date.now() - 86400_000 * 10), notAfter: new Date(Date.now() - 86400_000) })
        .certPem,
      /expired/,
    ],
  ])('rejects a certificate that is %s', (_what, pem, message) => {
    expect(() => parseSealingCertificate(pem)).toThrow(CertificateError);
    expect(() => parseSealingCertificate(pem)).toThrow(message);
  });
});
