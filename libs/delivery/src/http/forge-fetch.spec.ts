import { createServer, Server } from 'node:http';
import { ForgeError } from '../port/forge-port';
import { forgeFetch } from './forge-fetch';
import { describe as describeAnswer, retryAfterMs } from './forge-answers';
import { startGiteaStandIn } from '../../../../test/support/forges';

const bearer = (token: string): [string, string] => ['authorization', `Bearer ${token}`];

describe('the forge fetch', () => {
  let server: Server;
  let origin: string;
  let handler: (url: string, res: import('node:http').ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((req, res) => handler(req.url ?? '/', res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const fetchOf = (limits: { timeoutMs?: number; maxResponseBytes?: number } = {}) =>
    forgeFetch('gitea', { apiUrl: `${origin}/api/v1`, token: () => 'sekret-token-value', ...limits }, bearer);
  const failure = (call: Promise<unknown>) =>
    call.then(
      () => undefined,
      (e: unknown) => e as ForgeError,
    );

  it('refuses an answer larger than its bound', async () => {
    handler = (_, res) => res.end('x'.repeat(5000));
    expect(await (await fetchOf({ maxResponseBytes: 5000 })(`${origin}/api/v1/a`)).text()).toHaveLength(5000);
    const error = await failure(fetchOf({ maxResponseBytes: 4999 })(`${origin}/api/v1/a`));
    expect(error).toBeInstanceOf(ForgeError);
    expect(error!.message).toContain('answered more than 4999 bytes');
  });

  it('gives up on a forge that does not answer in time, as worth retrying', async () => {
    handler = () => undefined; // never answers
    const started = Date.now();
    const error = await failure(fetchOf({ timeoutMs: 300 })(`${origin}/api/v1/slow`));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toMatchObject({ retryAfterMs: 0 });
    expect(error!.message).toContain('gave no answer within 300 ms');
  });

  it('sends nothing to another origin than the API (a Link header or a client cannot carry the token away)', async () => {
    let called = false;
    handler = (_, res) => {
      called = true;
      res.end('{}');
    };
    const error = await failure(fetchOf()(`http://localhost:${new URL(origin).port}/api/v1/x`));
    expect(error!.message).toContain('is not the API');
    expect(called).toBe(false);
  });

  it('refuses plain http to anything but loopback', () => {
    expect(() => forgeFetch('gitlab', { apiUrl: 'http://gitlab.example/api/v4', token: () => 't' }, bearer)).toThrow(
      'must be https://',
    );
    expect(() =>
      forgeFetch('gitlab', { apiUrl: 'https://user:pw@gitlab.example/api/v4', token: () => 't' }, bearer),
    ).toThrow('no user information');
  });

  it('refuses a forge whose certificate no trusted CA signed, as a setting to fix (not worth retrying)', async () => {
    const gitea = await startGiteaStandIn();
    try {
      const untrusting = forgeFetch('gitea', { apiUrl: gitea.apiUrl, token: () => gitea.token }, bearer);
      const error = await failure(untrusting(`${gitea.apiUrl}/version`));
      expect(error!.message).toMatch(/TLS refused \(.+\); FORGE_CA_FILE/);
      expect(error!.retryable).toBe(false);
      expect(gitea.received).toHaveLength(0);
    } finally {
      await gitea.stop();
    }
  });

  it('never lets a client send its own credentials: the token header is set here only', async () => {
    let seen: string | undefined;
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      seen = `${req.headers.authorization}|${req.headers['private-token']}`;
      res.end('{}');
    });
    await fetchOf()(`${origin}/api/v1/x`, { headers: { authorization: 'token other', 'private-token': 'other' } });
    expect(seen).toBe('Bearer sekret-token-value|undefined');
  });
});

describe("a forge's error answer", () => {
  const now = Date.parse('2026-12-07T08:00:00Z');

  it.each([
    [
      'GitHub primary rate limit',
      403,
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 90) },
      90_000,
    ],
    ['GitHub secondary rate limit', 403, { 'retry-after': '30' }, 30_000],
    ['a 403 that is no rate limit', 403, { 'x-ratelimit-remaining': '4999' }, undefined],
    ['GitLab 429', 429, { 'ratelimit-reset': String(now / 1000 + 45) }, 45_000],
    ['Retry-After as a date', 429, { 'retry-after': new Date(now + 20_000).toUTCString() }, 20_000],
    ['a 429 that names no wait', 429, {}, 0],
    ['a 503 with Retry-After', 503, { 'retry-after': '5' }, 5000],
    ['a 404', 404, {}, undefined],
  ])('%s (%i): a wait of %p ms', (_, status, headers, wait) => {
    expect(retryAfterMs(status, headers, now)).toBe(wait);
  });

  it("keeps the forge's words, from each forge's error body", () => {
    expect(
      describeAnswer('{"message":"Validation Failed","errors":[{"message":"A pull request already exists for o:b."}]}'),
    ).toBe('Validation Failed; A pull request already exists for o:b.');
    expect(describeAnswer('{"message":["Another open merge request already exists for this source branch: !4"]}')).toBe(
      'Another open merge request already exists for this source branch: !4',
    );
    expect(describeAnswer('{"message":{"title":["can\'t be blank"]}}')).toBe("title can't be blank");
    expect(describeAnswer('<html><h1>502 Bad Gateway</h1></html>')).toBe('502 Bad Gateway');
    expect(describeAnswer('x'.repeat(1000))).toHaveLength(301);
  });
});
