import { readFileSync } from 'node:fs';
import { decryptSops } from 'sops-age';
import { ageIdentity, sopsDocument, sopsOpen } from '../support/sops-open';
import { sopsEncryptFile, SopsFormat } from '#libs/sealing/sops';

/** Files encrypted as `sops --encrypt --input-type <format>` writes them, opened by two independent readers. */
describe('sops files in every format kustomize-controller decrypts', () => {
  const cluster = ageIdentity();
  const secretKey = readFileSync(cluster.keyFile, 'utf8').match(/^AGE-SECRET-KEY-\S+$/m)![0];
  const open = async (bytes: Buffer, format: SopsFormat) => {
    const text = bytes.toString('utf8');
    const { plain, macOk } = sopsOpen(sopsDocument(text, format), cluster.keyFile);
    const fileType = format === 'dotenv' ? 'env' : format === 'binary' ? 'json' : format;
    return { plain, macOk, npm: await decryptSops(text, { secretKey, fileType }) };
  };

  it('dotenv: KEY=ENC[...] lines, then the flattened sops_* metadata; no value in clear', async () => {
    const bytes = await sopsEncryptFile({ DB_PASSWORD: 'Pw-0123456789', DSN: 'u:p@h/db?x=1' }, 'dotenv', {
      recipients: [cluster.recipient],
      now: new Date('2026-12-05T10:00:00Z'),
    });
    const text = bytes.toString('utf8');
    expect(text).toMatch(/^DB_PASSWORD=ENC\[AES256_GCM,data:[^,]+,iv:[^,]+,tag:[^,]+,type:str\]$/m);
    expect(text).toMatch(/^sops_age__list_0__map_recipient=age1/m);
    expect(text).toMatch(/^sops_age__list_0__map_enc=-----BEGIN AGE ENCRYPTED FILE-----\\n/m);
    expect(text).toMatch(/^sops_mac=ENC\[/m);
    expect(text).toMatch(/^sops_lastmodified=2026-12-05T10:00:00Z$/m);
    expect(text).toMatch(/^sops_unencrypted_suffix=_unencrypted$/m);
    expect(text).not.toContain('Pw-0123456789');
    const { plain, macOk, npm } = await open(bytes, 'dotenv');
    expect(macOk).toBe(true);
    expect([plain.DB_PASSWORD, plain.DSN]).toEqual(['Pw-0123456789', 'u:p@h/db?x=1']);
    expect(npm).toEqual({ DB_PASSWORD: 'Pw-0123456789', DSN: 'u:p@h/db?x=1' });
  });

  it.each(['yaml', 'json'] as const)(
    '%s: every leaf encrypted, keys readable, nested paths as associated data',
    async (format) => {
      const doc = { database: { password: 'Pw-abcdef012345', users: ['admin'] }, note_unencrypted: 'kept' };
      const bytes = await sopsEncryptFile(doc, format, { recipients: [cluster.recipient] });
      const parsed = sopsDocument(bytes.toString('utf8'), format);
      expect(parsed.database.password).toMatch(/^ENC\[/);
      expect(parsed.database.users[0]).toMatch(/^ENC\[/);
      expect(parsed.note_unencrypted).toBe('kept');
      const { plain, macOk, npm } = await open(bytes, format);
      expect(macOk).toBe(true);
      expect(plain).toEqual(doc);
      expect(npm).toEqual(doc);
    },
  );

  it('binary: the whole content as the value "data" of a JSON document', async () => {
    const bytes = await sopsEncryptFile(Buffer.from('token-0123456789\n'), 'binary', {
      recipients: [cluster.recipient],
    });
    const { plain, macOk, npm } = await open(bytes, 'binary');
    expect(macOk).toBe(true);
    expect(plain.data).toBe('token-0123456789\n');
    expect(npm).toEqual({ data: 'token-0123456789\n' });
  });
});
