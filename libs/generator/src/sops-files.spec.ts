import { GeneratorValidationError } from './errors';
import { allValuesEncrypted, formatForPath, isEncryptedGeneratedValue, readSopsFile } from './sops-files';
import { checkNotPlaintextSecret } from './validate';

const ENC = 'ENC[AES256_GCM,data:AAAA,iv:BBBB,tag:CCCC,type:str]';
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('SOPS files a secretGenerator reads', () => {
  it("picks the format from the name as sops' FormatForPath does", () => {
    expect(['a.enc.yaml', 'b.yml', 'c.json', 'd.env', 'e.ini', 'token', 'f.encrypted'].map(formatForPath)).toEqual([
      'yaml',
      'yaml',
      'json',
      'dotenv',
      'ini',
      'binary',
      'binary',
    ]);
  });

  it('reads an encrypted dotenv (keys and recipients) and refuses a plaintext one or one without a MAC', () => {
    const text = `# comment\nA=${ENC}\nB=${ENC}\nsops_age__list_0__map_recipient=age1x\nsops_mac=${ENC}\n`;
    const file = readSopsFile(text, 'dotenv')!;
    expect(Object.keys(file.body)).toEqual(['A', 'B']);
    expect(file.recipients).toEqual(['age1x']);
    expect(allValuesEncrypted(file)).toBe(true);
    expect(readSopsFile('A=plain\n', 'dotenv')).toBeNull();
    expect(allValuesEncrypted(readSopsFile(`A=plain\nsops_mac=${ENC}\n`, 'dotenv')!)).toBe(false);
  });

  it('allows a clear value only under the _unencrypted suffix', () => {
    const file = (body: object) => readSopsFile(JSON.stringify({ ...body, sops: { mac: ENC } }), 'json')!;
    expect(allValuesEncrypted(file({ a: { b: ENC }, note_unencrypted: { x: 'clear' } }))).toBe(true);
    expect(allValuesEncrypted(file({ a: { b: 'clear' } }))).toBe(false);
    expect(readSopsFile('{"a": 1}', 'json')).toBeNull();
  });

  it('validation takes a generated Secret of encrypted files as protected, and nothing in clear', () => {
    const yamlFile = `password: ${ENC}\nsops:\n  mac: ${ENC}\n`;
    expect(isEncryptedGeneratedValue('config.yaml', yamlFile)).toBe(true);
    expect(isEncryptedGeneratedValue('config.yaml', `password: hunter2\nsops:\n  mac: ${ENC}\n`)).toBe(false);
    const generated = (data: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data,
    });
    expect(() =>
      checkNotPlaintextSecret(generated({ A: b64(ENC), sops_mac: b64(ENC), sops_version: b64('3.9.4') }), 'x'),
    ).not.toThrow();
    expect(() => checkNotPlaintextSecret(generated({ 'config.yaml': b64(yamlFile) }), 'x')).not.toThrow();
    // A key named like sops metadata proves nothing without an encrypted MAC beside it.
    expect(() => checkNotPlaintextSecret(generated({ sops_password: b64('hunter2') }), 'x')).toThrow(
      GeneratorValidationError,
    );
    expect(() => checkNotPlaintextSecret(generated({ A: b64(ENC), B: b64('clear'), sops_mac: b64(ENC) }), 'x')).toThrow(
      /builds a plaintext Secret/,
    );
  });
});
