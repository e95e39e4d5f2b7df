import { makeRsaCert } from '../../test/support/certs';
import { createBody } from '../../test/support/run-fixtures';
import { ApiError } from '../common/api-error';
import { parseCreateRequest } from './create-request';

const cert = makeRsaCert();
const OPTS = { allowedSchemes: ['https', 'ssh'], defaultBranch: 'main', steps: { referenceEnv: 'development' } };
const parse = (extra: object) =>
  parseCreateRequest({ ...createBody('acme', 'https://git.example.com/fleet.git', cert.certPem), ...extra }, OPTS);
const refusal = (extra: object): ApiError => {
  try {
    parse(extra);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('accepted');
};

describe("a request's replace and strict (the leftover gate's inputs)", () => {
  it('is strict unless the caller opts out, and records replace as given', () => {
    expect(parse({}).strict).toBe(true);
    expect(parse({ strict: true }).strict).toBe(true);
    expect(parse({ strict: false }).strict).toBe(false);
    expect(parse({}).replace).toBeUndefined();
    expect(parse({ replace: {} }).replace).toBeUndefined();
    const replace = { 'main-cluster': 'acme', '10.69.1.254': '10.0.0.1', 'https://git.example.com/old.git': 'x' };
    expect(parse({ replace }).replace).toEqual(replace);
  });

  it('refuses (400) an empty OLD and a control character in OLD or NEW, naming each pair at once', () => {
    const e = refusal({ replace: { '': 'x', 'a\nb': 'c', ok: 'line\u0000break', fine: 'fine' } });
    expect(e.status).toBe(400);
    expect(e.details).toEqual([
      { field: 'replace.', problem: 'OLD must be non-empty and neither may hold a control character' },
      { field: 'replace.a\\nb', problem: 'OLD must be non-empty and neither may hold a control character' },
      { field: 'replace.ok', problem: 'OLD must be non-empty and neither may hold a control character' },
    ]);
  });

  it('refuses (400) more than 100 pairs, an OLD or NEW over 512 characters, and values of the wrong type', () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`old-${i}`, `new-${i}`]));
    expect(refusal({ replace: many }).details).toEqual([{ field: 'replace', problem: expect.any(String) }]);
    expect(refusal({ replace: { ['o'.repeat(513)]: 'n' } }).status).toBe(400);
    expect(refusal({ replace: { o: 'n'.repeat(513) } }).details).toEqual([
      { field: 'replace.o', problem: 'must NOT have more than 512 characters' },
    ]);
    expect(refusal({ replace: { o: 3 } }).details).toEqual([{ field: 'replace.o', problem: 'must be string' }]);
    expect(refusal({ replace: ['a=b'] }).details).toEqual([{ field: 'replace', problem: 'must be object' }]);
    expect(refusal({ strict: 'yes' }).details).toEqual([{ field: 'strict', problem: 'must be boolean' }]);
  });
});
