import { makeRsaCert } from '../../test/support/certs';
import { createBody } from '../../test/support/run-fixtures';
import { ApiError } from '../common/api-error';
import { parseCreateRequest } from './create-request';

const cert = makeRsaCert();
const OPTS = { allowedSchemes: ['https', 'ssh'], defaultBranch: 'main', steps: { referenceEnv: 'development' } };
const body = (extra: object = {}) => ({ ...createBody('acme', 'https://git.example.com/fleet.git', cert.certPem), ...extra });
const refusal = (b: unknown): ApiError => {
  try {
    parseCreateRequest(b, OPTS);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('accepted');
};

describe('create request validation reports every problem at once', () => {
  it('names a misspelt field as unknown before the field it was meant to be', () => {
    const { cluster_name: _omitted, ...rest } = body();
    const e = refusal({ ...rest, clustr_name: 'acme' });
    expect(e.details).toEqual([
      { field: 'clustr_name', problem: 'unknown field' },
      { field: 'cluster_name', problem: 'is required' },
    ]);
    expect(e.message).toBe('clustr_name: unknown field; cluster_name: is required');
  });

  it('lists every invalid value, not only the first', () => {
    const e = refusal(body({ domain: 'not a domain', region: 'EU WEST', repo: { url: 'ftp://x/y.git', branch: 'HEAD' } }));
    expect(e.status).toBe(400);
    expect(e.details!.map((d) => d.field)).toEqual(['domain', 'region', 'repo.url', 'repo.branch']);
  });

  it('reports at most 20 problems for a body of thousands of unknown fields', () => {
    const junk = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`f${i}`, i]));
    expect(refusal(body(junk)).details).toHaveLength(20);
  });
});
