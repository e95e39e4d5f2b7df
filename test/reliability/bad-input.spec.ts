import { connect } from '@nats-io/transport-node';
import { headers, NatsConnection } from '@nats-io/nats-core';
import { callerFor } from '../../src/common/api-keys';
import { sha256Of } from '../../src/config/api-key';
import { makeEcCert, makeRsaCert } from '../support/certs';
import { bareRepo, gitLog } from '../support/services';
import { api, API_KEY, eventCount } from '../support/service';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

describe('bad input and abuse catalogue: a 4xx naming the field, nothing appended, nothing pushed', () => {
  const stack = useServiceStack();
  let nc: NatsConnection;
  const cert = makeRsaCert();
  const remote = bareRepo();
  const good = {
    cluster_name: 'abuse',
    domain: 'abuse.example.com',
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url: remote.url, branch: 'main' },
    target: { sealing_cert_pem: cert.certPem },
  };
  const withField = (patch: Record<string, unknown>) => ({ ...good, ...patch });
  const withRepo = (repo: Record<string, unknown>) => ({ ...good, repo: { ...good.repo, ...repo } });

  // [case, body (object, or raw text), status, the field named in the message]
  const CASES: Array<[string, unknown, number, RegExp]> = [
    ['cluster_name missing', withField({ cluster_name: undefined }), 400, /^cluster_name: is required/],
    ['cluster_name uppercase', withField({ cluster_name: 'Abuse' }), 400, /^cluster_name:/],
    ['cluster_name with ..', withField({ cluster_name: '..' }), 400, /^cluster_name:/],
    ['cluster_name path traversal', withField({ cluster_name: '../../etc' }), 400, /^cluster_name:/],
    ['cluster_name absolute path', withField({ cluster_name: '/etc/passwd' }), 400, /^cluster_name:/],
    ['cluster_name with newline', withField({ cluster_name: 'a\nb' }), 400, /^cluster_name:/],
    ['cluster_name with NUL', withField({ cluster_name: 'a\u0000b' }), 400, /^cluster_name:/],
    ['cluster_name too long', withField({ cluster_name: 'a'.repeat(64) }), 400, /^cluster_name:/],
    ['cluster_name number', withField({ cluster_name: 42 }), 400, /^cluster_name:/],
    ['cluster_name option-like', withField({ cluster_name: '--help' }), 400, /^cluster_name:/],
    ['domain missing', withField({ domain: undefined }), 400, /^domain: is required/],
    ['domain single label', withField({ domain: 'localhost' }), 400, /^domain:/],
    ['domain with space', withField({ domain: 'exa mple.com' }), 400, /^domain:/],
    ['domain with YAML', withField({ domain: 'a.com\nkind: Secret' }), 400, /^domain:/],
    ['domain with shell', withField({ domain: 'a.com;rm -rf /' }), 400, /^domain:/],
    ['domain with $()', withField({ domain: '$(id).example.com' }), 400, /^domain:/],
    ['domain uppercase', withField({ domain: 'Example.COM' }), 400, /^domain:/],
    ['domain with NUL', withField({ domain: 'a\u0000.com' }), 400, /^domain:/],
    ['domain wildcard', withField({ domain: '*.example.com' }), 400, /^domain:/],
    ['region with space', withField({ region: 'eu west 1' }), 400, /^region:/],
    ['region with YAML', withField({ region: 'eu-west-1\n- x' }), 400, /^region:/],
    ['region object', withField({ region: { a: 1 } }), 400, /^region:/],
    ['acme_email without @', withField({ acme_email: 'ops.example.com' }), 400, /^acme_email:/],
    ['acme_email with shell', withField({ acme_email: 'a@b.com;$(reboot)' }), 400, /^acme_email:/],
    ['acme_email with quote', withField({ acme_email: "o'neil@example.com" }), 400, /^acme_email:/],
    ['acme_email with newline', withField({ acme_email: 'a@b.com\nkind: Secret' }), 400, /^acme_email:/],
    ['acme_email with braces', withField({ acme_email: '${HOME}@example.com' }), 400, /^acme_email:/],
    ['unknown top-level field', withField({ admin: true }), 400, /^admin: unknown field/],
    ['unknown repo field', withRepo({ depth: 1 }), 400, /^repo.depth: unknown field/],
    [
      'repo url --upload-pack',
      withRepo({ url: '--upload-pack=touch /tmp/pwned' }),
      400,
      /^repo.url: must not start with "-"/,
    ],
    ['repo url ext::', withRepo({ url: 'ext::sh -c touch% /tmp/pwned' }), 400, /^repo.url:/],
    ['repo url fd::', withRepo({ url: 'fd::3' }), 400, /^repo.url:/],
    ['repo url no scheme', withRepo({ url: '/srv/git/platform.git' }), 400, /^repo.url:/],
    ['repo url with newline', withRepo({ url: 'https://example.com/a.git\n--upload-pack=x' }), 400, /^repo.url:/],
    ['repo url ftp', withRepo({ url: 'ftp://example.com/a.git' }), 400, /^repo.url: scheme "ftp" is not allowed/],
    [
      'repo url with a token in its query string',
      withRepo({ url: 'https://example.com/a.git?private_token=glpat-x' }),
      400,
      /^repo.url: must not have a query string or fragment$/,
    ],
    [
      'repo url with a fragment',
      withRepo({ url: 'https://example.com/a.git#main' }),
      400,
      /^repo.url: must not have a query string or fragment$/,
    ],
    [
      'flux url with a query string',
      withRepo({ flux_url: 'https://example.com/a.git?token=x' }),
      400,
      /^repo.flux_url: must not have a query string or fragment$/,
    ],
    ['branch option-like', withRepo({ branch: '--force' }), 400, /^repo.branch:/],
    ['branch with ..', withRepo({ branch: 'a/../b' }), 400, /^repo.branch:/],
    ['branch with space', withRepo({ branch: 'main; rm' }), 400, /^repo.branch:/],
    ['branch reflog syntax', withRepo({ branch: 'main@{1}' }), 400, /^repo.branch:/],
    ['target missing', withField({ target: undefined }), 400, /^target: is required/],
    ['target empty', withField({ target: {} }), 400, /^target: give exactly one/],
    [
      'target both',
      withField({
        target: { sealing_cert_pem: cert.certPem, kubeconfig_secret: { namespace: 'a', name: 'b', key: 'c' } },
      }),
      400,
      /^target: give exactly one/,
    ],
    [
      'certificate not PEM',
      withField({ target: { sealing_cert_pem: 'not a certificate' } }),
      400,
      /^target.sealing_cert_pem: certificate is not a PEM/,
    ],
    [
      'certificate EC key',
      withField({ target: { sealing_cert_pem: makeEcCert() } }),
      400,
      /^target.sealing_cert_pem: certificate key is ec/,
    ],
    [
      'certificate expired',
      withField({
        target: {
          sealing_cert_pem: makeRsaCert({ notBefore: new Date(2020, 0, 1), notAfter: new Date(2021, 0, 1) }).certPem,
        },
      }),
      400,
      /^target.sealing_cert_pem: certificate expired/,
    ],
    [
      'certificate private key instead',
      withField({ target: { sealing_cert_pem: cert.privateKeyPem } }),
      400,
      /^target.sealing_cert_pem:/,
    ],
    [
      'kubeconfig target without the Kubernetes executor',
      withField({ target: { kubeconfig_secret: { namespace: 'capi', name: 'c-kubeconfig', key: 'value' } } }),
      422,
      /^target.kubeconfig_secret/,
    ],
    ['array body', [good], 400, /^body: must be a JSON object/],
    ['string body', 'just a string', 400, /^body: must be a JSON object/],
    ['null body', null, 400, /^body: must be a JSON object/],
  ];

  const natsCreate = async (payload: string, key = API_KEY) => {
    const h = headers();
    h.set('X-Api-Key', key);
    return JSON.parse((await nc.request('scaffolds.v1.create', payload, { timeout: 10_000, headers: h })).string());
  };
  const streamCount = () => eventCount(stack.svc);

  beforeAll(async () => {
    nc = await connect({ servers: stack.nats.url });
  });
  afterAll(async () => {
    await nc.close();
  });

  it('has at least 40 cases', () => expect(CASES.length).toBeGreaterThanOrEqual(40));

  it.each(CASES)('%s: REST and NATS answer the same 4xx', async (_name, payload, status, field) => {
    const before = await streamCount();
    const commits = gitLog(remote.dir).length;
    const text = JSON.stringify(payload);
    const rest = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', text);
    expect(rest.status).toBe(status);
    expect(rest.json.error.message).toMatch(field);
    expect(await natsCreate(text)).toEqual(rest.json);
    expect(await streamCount()).toBe(before);
    expect(gitLog(remote.dir)).toHaveLength(commits);
  });

  it.each([
    ['malformed JSON', '{"cluster_name": ', 'application/json', 400, 'invalid_json'],
    [
      'an unterminated string (once froze the service before the key check)',
      '{"abc',
      'application/json',
      400,
      'invalid_json',
    ],
    ['an unterminated escape', '{"a":"\\', 'application/json', 400, 'invalid_json'],
    ['empty body', '', 'application/json', 400, 'invalid_request'],
    ['trailing garbage', '{} x', 'application/json', 400, 'invalid_json'],
    ['form body', 'cluster_name=a', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type'],
    ['text body', 'hello', 'text/plain', 415, 'unsupported_media_type'],
    [
      'over 1 MiB',
      JSON.stringify({ ...good, domain: 'a'.repeat(1024 * 1024 + 10) }),
      'application/json',
      413,
      'payload_too_large',
    ],
  ])('%s over REST', async (_name, raw, type, status, code) => {
    const before = await streamCount();
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', raw, { 'content-type': type });
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(await streamCount()).toBe(before);
  });

  it('malformed JSON and oversize bodies over NATS', async () => {
    expect((await natsCreate('{"cluster_name": ')).error.code).toBe('invalid_json');
    expect((await natsCreate('{"abc')).error.code).toBe('invalid_json');
    const big = JSON.stringify({ ...good, domain: 'a'.repeat(1024 * 1024 + 10) });
    const h = headers();
    h.set('X-Api-Key', API_KEY);
    // The server's max_payload (1 MiB by default) refuses it before the service sees it, or the service answers 413.
    const outcome = await nc.request('scaffolds.v1.create', big, { timeout: 5000, headers: h }).then(
      (m) => JSON.parse(m.string()).error.code,
      (e) => String(e.message),
    );
    expect(outcome).toMatch(/payload_too_large|MAX_PAYLOAD|max payload|maximum payload/i);
  });

  it('missing, wrong and near-miss API keys get 401 on every route, REST and NATS', async () => {
    for (const key of ['', 'wrong', API_KEY.slice(0, -1), API_KEY + 'x', API_KEY.toUpperCase()]) {
      for (const [method, path] of [
        ['GET', '/api/v1/scaffolds'],
        ['POST', '/api/v1/scaffolds'],
        ['GET', '/api/v1/events'],
        ['GET', '/api/v1/scaffolds/00000000-0000-4000-8000-000000000000'],
      ]) {
        const r = await api(stack.svc.base, method, path, method === 'POST' ? good : undefined, { 'x-api-key': key });
        expect(r.status).toBe(401);
      }
      expect((await natsCreate(JSON.stringify(good), key)).error.code).toBe('unauthorized');
    }
  });

  it('compares keys in constant time: a near miss costs what a far miss costs', () => {
    const keys = new Map([['default', { sha256: sha256Of('k'.repeat(40)), role: 'admin' as const }]]);
    const batch = (presented: string) => {
      const t = process.hrtime.bigint();
      for (let i = 0; i < 500; i++) {
        try {
          callerFor(keys, presented);
        } catch {
          /* expected 401 */
        }
      }
      return Number(process.hrtime.bigint() - t);
    };
    // Near and far batches alternate and are compared pairwise, so a busy machine slows both alike;
    // the median of the pairs' ratios is what a timing attacker would see.
    batch('warm-up');
    const ratios: number[] = [];
    for (let pair = 0; pair < 61; pair++) ratios.push(batch('k'.repeat(39) + 'x') / batch('x'));
    const ratio = ratios.sort((a, b) => a - b)[30];
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});
