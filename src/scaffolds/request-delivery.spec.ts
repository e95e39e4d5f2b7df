import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { forgeSettingsFromEnv } from '#libs/delivery/forge-settings';
import { makeRsaCert } from '../../test/support/certs';
import { tempDir } from '../../test/support/files';
import { createBody } from '../../test/support/run-fixtures';
import { ApiError } from '../common/api-error';
import { parseCreateRequest } from './create-request';
import { checkDelivery } from './request-checks';

const cert = makeRsaCert();
const OPTS = { allowedSchemes: ['https', 'ssh'], defaultBranch: 'main', steps: { referenceEnv: 'development' } };
const token = join(tempDir('delivery-token'), 'github');
writeFileSync(token, 'ghp_deliverytoken0001\n', { mode: 0o600 });
const FORGES = forgeSettingsFromEnv({
  FORGE_DEFAULTS: JSON.stringify([
    { prefix: 'https://github.com/acme-platform', forge: 'github', token_file: token, auto_merge: true },
    { prefix: 'https://github.com/acme-platform/strict', forge: 'github', token_file: token },
  ]),
});

const request = (url: string, delivery: unknown) =>
  parseCreateRequest({ ...createBody('acme', url, cert.certPem), delivery }, OPTS);
const refusal = (url: string, delivery: unknown): ApiError => {
  try {
    checkDelivery(request(url, delivery), FORGES);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('accepted');
};

describe("a request's delivery", () => {
  it('is recorded as given, and a push needs no forge', () => {
    expect(request('https://github.com/acme-platform/envs.git', { mode: 'merge_request' }).delivery).toEqual({
      mode: 'merge_request',
    });
    expect(() => checkDelivery(request('https://git.example.com/fleet.git', { mode: 'push' }), FORGES)).not.toThrow();
    expect(() =>
      checkDelivery(
        request('git@github.com:acme-platform/envs.git', { mode: 'merge_request', auto_merge: true }),
        FORGES,
      ),
    ).not.toThrow();
  });

  it('refuses (400) a mode or forge it does not know, and a field it does not know', () => {
    expect(() => request('https://github.com/acme-platform/envs.git', { mode: 'email' })).toThrow(ApiError);
    expect(() =>
      request('https://github.com/acme-platform/envs.git', { mode: 'merge_request', forge: 'bitbucket' }),
    ).toThrow(ApiError);
    expect(() => request('https://github.com/acme-platform/envs.git', { mode: 'push', token: 'x' })).toThrow(ApiError);
  });

  it('refuses (422) what the settings cannot carry out, naming the setting', () => {
    expect(refusal('https://git.example.com/fleet.git', { mode: 'merge_request' })).toMatchObject({
      status: 422,
      message: expect.stringContaining('no forge is configured for https://git.example.com/fleet.git (FORGE_DEFAULTS)'),
    });
    expect(
      refusal('https://github.com/acme-platform/envs.git', { mode: 'merge_request', forge: 'gitlab' }),
    ).toMatchObject({
      status: 422,
      message: expect.stringContaining('delivery.forge gitlab: the settings name github'),
    });
    // A request cannot send the token to another API.
    expect(
      refusal('https://github.com/acme-platform/envs.git', {
        mode: 'merge_request',
        api_url: 'https://evil.example/api',
      }),
    ).toMatchObject({ status: 422, message: expect.stringContaining('its token is sent to no other API') });
    expect(
      refusal('https://github.com/acme-platform/strict/envs.git', { mode: 'merge_request', auto_merge: true }),
    ).toMatchObject({ status: 422, message: expect.stringContaining('do not allow auto-merge') });
    expect(refusal('https://github.com/acme-platform/envs.git', { mode: 'push', auto_merge: true })).toMatchObject({
      status: 422,
    });
  });
});
