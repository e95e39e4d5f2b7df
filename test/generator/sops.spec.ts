import { isAgeRecipient, sopsEncrypt, SopsError } from '#libs/sealing/sops';
import { ageIdentity, sopsOpen } from '../support/sops-open';

describe('SOPS with age recipients (checked with the age command line)', () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'postgresql-credentials', namespace: 'data', labels: { tier: 'db' } },
    type: 'Opaque',
    stringData: { username: 'u123', password: 'S3cret-Value-0123456789', port: 5432 },
    data: { token: Buffer.from('raw-token').toString('base64') },
  };

  it('encrypts only data/stringData values, wraps the data key for each recipient, and writes a valid MAC', async () => {
    const a = ageIdentity();
    const b = ageIdentity();
    const now = new Date('2026-12-02T10:20:30.456Z');
    const enc: any = await sopsEncrypt(secret, { recipients: [a.recipient, b.recipient], now });
    expect(enc.metadata).toEqual(secret.metadata);
    expect(enc.kind).toBe('Secret');
    expect(enc.stringData.password).toMatch(/^ENC\[AES256_GCM,data:[^,]+,iv:[^,]+,tag:[^,]+,type:str\]$/);
    expect(enc.stringData.port).toMatch(/type:int\]$/);
    expect(Buffer.from(/iv:([^,]+)/.exec(enc.stringData.password)![1], 'base64')).toHaveLength(32);
    expect(JSON.stringify(enc)).not.toContain('S3cret-Value-0123456789');
    expect(enc.sops).toMatchObject({
      lastmodified: '2026-12-02T10:20:30Z',
      encrypted_regex: '^(data|stringData)$',
      version: '3.9.4',
    });
    expect(enc.sops.age.map((x: any) => x.recipient)).toEqual([a.recipient, b.recipient]);
    expect(enc.sops.age[0].enc).toMatch(
      /^-----BEGIN AGE ENCRYPTED FILE-----\n[\s\S]+-----END AGE ENCRYPTED FILE-----\n?$/,
    );
    const opened = sopsOpen(enc, a.keyFile);
    expect(opened.macOk).toBe(true);
    expect(opened.plain).toEqual(secret);
    const second = sopsOpen({ ...enc, sops: { ...enc.sops, age: [enc.sops.age[1]] } }, b.keyFile);
    expect(second.plain).toEqual(secret);
  });

  it('binds each value to its path: a value moved to another key does not open', async () => {
    const a = ageIdentity();
    const enc: any = await sopsEncrypt(secret, { recipients: [a.recipient] });
    const swapped = { ...enc, stringData: { ...enc.stringData, username: enc.stringData.password } };
    expect(() => sopsOpen(swapped, a.keyFile)).toThrow();
  });

  it('detects a changed plaintext value through the MAC', async () => {
    const a = ageIdentity();
    const enc: any = await sopsEncrypt(secret, { recipients: [a.recipient] });
    expect(sopsOpen({ ...enc, type: 'kubernetes.io/basic-auth' }, a.keyFile).macOk).toBe(false);
  });

  it('refuses what is not an age recipient, and a document already encrypted', async () => {
    expect(isAgeRecipient('age1qwwzsz6z2mmu6hpmjt2he7nepmnhutmhehvkva7l5zy5xzf08d5s5n4d6n')).toBe(true);
    expect(isAgeRecipient('AGE-SECRET-KEY-1XYZ')).toBe(false);
    await expect(sopsEncrypt(secret, { recipients: ['ssh-ed25519 AAAA'] })).rejects.toThrow(SopsError);
    await expect(sopsEncrypt(secret, { recipients: [] })).rejects.toThrow(/at least one/);
    await expect(sopsEncrypt({ ...secret, sops: {} }, { recipients: [ageIdentity().recipient] })).rejects.toThrow(
      /already encrypted/,
    );
  });
});
