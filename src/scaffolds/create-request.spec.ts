import { resolve } from 'node:path';
import fc from 'fast-check';
import { makeRsaCert } from '../../test/support/certs';
import { tempDir } from '../../test/support/files';
import { writeFluxExampleReference } from '../../test/support/flux-example-repo';
import { createBody } from '../../test/support/run-fixtures';
import { ApiError } from '../common/api-error';
import { parseCreateRequest } from './create-request';

const cert = makeRsaCert();
const OPTS = { allowedSchemes: ['https', 'ssh'], defaultBranch: 'main', steps: { referenceEnv: 'development' } };
const body = (extra: object = {}) => ({
  ...createBody('acme', 'https://git.example.com/fleet.git', cert.certPem),
  ...extra,
});
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
    const e = refusal(
      body({ domain: 'not a domain', region: 'EU WEST', repo: { url: 'ftp://x/y.git', branch: 'HEAD' } }),
    );
    expect(e.status).toBe(400);
    expect(e.details!.map((d) => d.field)).toEqual(['domain', 'region', 'repo.url', 'repo.branch']);
  });

  it('names both a missing repository and a missing target, and the shape problems with the values', () => {
    const { repo: _repo, target: _target, ...rest } = body();
    expect(refusal(rest).details).toEqual([
      { field: 'target', problem: 'is required' },
      { field: 'repo.url', problem: 'is required (no PLATFORM_REPO_URL default is configured)' },
    ]);
    const e = refusal({ ...rest, domain: 'not a domain', cluster_name: 42 });
    expect(e.details!.map((d) => d.field)).toEqual(['target', 'cluster_name', 'domain', 'repo.url']);
  });

  it("lists the target's problems with the others", () => {
    const sops = refusal(
      body({ region: 'EU WEST', secrets_backend: 'sops', target: { age_recipients: ['AGE-SECRET-KEY-1', 'x'] } }),
    );
    expect(sops.details!.map((d) => d.field)).toEqual(['region', 'target.age_recipients.0', 'target.age_recipients.1']);
    const cert = refusal(body({ region: 'EU WEST', target: { sealing_cert_pem: 'not a certificate' } }));
    expect(cert.details!.map((d) => d.field)).toEqual(['region', 'target.sealing_cert_pem']);
  });

  it('reports at most 20 problems for a body of thousands of unknown fields', () => {
    const junk = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`f${i}`, i]));
    expect(refusal(body(junk)).details).toHaveLength(20);
  });
});

describe('repository URLs', () => {
  it.each([
    ['repo', { url: 'https://git.example.com/fleet.git?private_token=glpat-abc' }, 'repo.url'],
    ['repo', { url: 'https://git.example.com/fleet.git#main' }, 'repo.url'],
    [
      'repo',
      { url: 'https://git.example.com/fleet.git', flux_url: 'https://git.example.com/fleet.git?token=x' },
      'repo.flux_url',
    ],
  ])('refuses a query string or fragment, naming the field (%s %j)', (field, value, named) => {
    const e = refusal(body({ [field]: value }));
    expect([e.status, e.details?.[0]]).toEqual([
      400,
      { field: named, problem: 'must not have a query string or fragment' },
    ]);
    expect(e.message).not.toMatch(/glpat|token=x/);
  });

  it.each([
    'https://[::1]/fleet.git',
    'ssh://git@[2001:db8::7]:2222/fleet.git',
    'https://[2001:DB8:0::7]:8443/fleet.git',
  ])('accepts the IPv6 literal host of %s', (url) => {
    expect(parseCreateRequest(body({ repo: { url } }), OPTS).repo_url).toBe(new URL(url).href);
    expect(
      parseCreateRequest(body({ repo: { url } }), { ...OPTS, allowedHosts: ['[::1]', '[2001:db8::7]'] }).repo_url,
    ).toBe(new URL(url).href);
  });
});

describe('one form of every repository URL', () => {
  it.each([
    ['repo.url', { url: 'root@git.example.com:/srv/git/tenant-a//../tenant-b/fleet.git' }, /empty path segment/],
    ['repo.url', { url: 'https://git.example.com/org//fleet.git' }, /empty path segment/],
    ['repo.url', { url: 'https://git.example.com/org/./fleet.git' }, /"\." or "\.\." path segments/],
    ['repo.url', { url: 'https://git.example.com/org;x/fleet.git' }, /";"/],
    ['repo.url', { url: 'https://git.example.com/org/%2e%2e/fleet.git' }, /percent-encoded/],
    ['repo.url', { url: 'https://git.example.com/org%2ffleet.git' }, /percent-encoded/],
    ['repo.url', { url: 'https://git.example.com/org/%25/fleet.git' }, /percent-encoded/],
    [
      'repo.flux_url',
      { url: 'https://git.example.com/fleet.git', flux_url: 'ssh://git@git.example.com/org//fleet.git' },
      /empty path segment/,
    ],
  ])('refuses %s %j (400 naming the field)', (field, repo, problem) => {
    const e = refusal(body({ repo }));
    expect([e.status, e.details?.[0].field]).toEqual([400, field]);
    expect(e.details?.[0].problem).toMatch(problem);
  });

  it('records a scp-like URL as the ssh:// URL git is given', () => {
    const req = parseCreateRequest(body({ repo: { url: 'git@Git.Example.com:acme/fleet.git' } }), OPTS);
    expect(req.repo_url).toBe('ssh://git@git.example.com/acme/fleet.git');
  });

  it.each([
    ['right-to-left override', 'main\u202egnp.'],
    ['left-to-right isolate', 'release/\u2066x'],
    ['zero-width space', 'ma\u200bin'],
    ['zero-width joiner', 'main\u200d'],
    ['byte order mark', '\ufeffmain'],
    ['line separator', 'main\u2028x'],
    ['next line (C1)', 'main\u0085x'],
  ])('refuses a branch with a %s, naming the character', (_what, branch) => {
    const e = refusal(body({ repo: { url: 'https://git.example.com/fleet.git', branch } }));
    expect([e.status, e.details?.[0].field]).toEqual([400, 'repo.branch']);
    expect(e.details?.[0].problem).toMatch(
      /^must not contain bidirectional, zero-width or line-separator characters \(U\+[0-9A-F]{4}\)$/,
    );
  });
});

/** How long one request's validation may take on a busy 2-core machine: far above what a linear check needs, far below "stuck". */
const BOUND_MS = 2000;

/** Text an attacker would try on a pattern: long runs of the characters patterns repeat over, and random text. */
const hostileText = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc
    .tuple(
      fc.constantFrom(
        'a',
        '-',
        '.',
        'a.',
        'a-',
        '@',
        ':',
        '::',
        '/',
        '//',
        '@a',
        '[',
        ']',
        '%',
        '\\',
        '..',
        '{',
        '$',
        '*.',
      ),
      fc.integer({ min: 1, max: 20_000 }),
      fc.string({ maxLength: 3 }),
    )
    .map(([unit, times, tail]) => unit.repeat(times) + tail),
);

describe("reference_env: an environment of the service's template, by name or repository folder", () => {
  const opts = {
    ...OPTS,
    steps: { templateDir: resolve('test/fixtures/public/onedr0p-cluster-template'), referenceEnv: 'dev' },
    referenceEnvs: ['kubernetes/main', 'kubernetes/staging'],
  };
  const parse = (reference_env: unknown) => parseCreateRequest(body({ reference_env }), opts);
  const problem = (reference_env: unknown) => {
    try {
      parse(reference_env);
    } catch (e) {
      const err = e as ApiError;
      return { status: err.status, details: err.details, message: err.message };
    }
    throw new Error('accepted');
  };

  it('accepts a folder such as kubernetes/main and records it', () => {
    expect(parse('kubernetes/main').reference_env).toBe('kubernetes/main');
    expect(parseCreateRequest(body(), opts).reference_env).toBeUndefined();
  });

  it.each([['kubernetes//main'], ['kubernetes/main/'], ['./kubernetes/main'], ['./kubernetes/./main/']])(
    'reads %j as kubernetes/main, the way people write a folder, and records that one spelling',
    (value) => {
      expect(parse(value).reference_env).toBe('kubernetes/main');
    },
  );

  it.each([
    ['../kubernetes/main'],
    ['kubernetes/../main'],
    ['/kubernetes/main'],
    ['./../kubernetes/main'],
    ['kubernetes/.git'],
    ['.hidden/main'],
    ['kubernetes/ma in'],
    ['a/b/c/d/e/f/g'],
    [`kubernetes/${'m'.repeat(100)}`],
  ])('refuses %j as a field problem, before anything is read', (value) => {
    expect(problem(value)).toMatchObject({
      status: 400,
      details: [{ field: 'reference_env', problem: expect.stringMatching(/repository-relative folder/) }],
    });
  });

  it('refuses an offered folder the template does not have without naming where the template is or what it holds', () => {
    const refused = problem('kubernetes/staging');
    expect(refused.status).toBe(422);
    expect(refused.message).toBe(
      "reference_env: kubernetes/staging is offered but missing from the service's template (its configuration)",
    );
  });

  it("refuses every folder of the template the service does not offer (another customer's), listing none", () => {
    for (const other of ['kubernetes', 'kubernetes/apps', 'kubernetes/flux', 'kubernetes/main/apps']) {
      const refused = problem(other);
      expect(refused.status).toBe(422);
      expect(refused.message).toBe(`reference_env: ${other} is not a reference environment this service offers`);
    }
  });
});

describe('every request parser ends in bounded time on any input', () => {
  const flux = tempDir('flux-ref');
  writeFluxExampleReference(flux);
  const references = [
    { ...OPTS, steps: { templateDir: flux, referenceEnv: 'staging' } },
    {
      ...OPTS,
      allowedHosts: ['git.example.com', '*.corp.example', '[::1]:8443'],
      steps: { templateDir: resolve('templates/phased-platform'), referenceEnv: 'dev' },
    },
  ];
  const fields = [
    'cluster_name',
    'domain',
    'region',
    'acme_email',
    'reference_domain',
    'reference_env',
    'repo.url',
    'repo.branch',
    'repo.flux_url',
    'host_map',
    'path_map',
    'cluster_vars',
    'credentials_secret.namespace',
    'target.age_recipients',
  ];

  /** The good body with one field replaced by hostile text (at its place in the shape). */
  const withHostile = (field: string, text: string) => {
    const b: any = body({ repo: { url: 'https://git.example.com/fleet.git' } });
    const [outer, inner] = field.split('.');
    if (field === 'host_map' || field === 'path_map' || field === 'cluster_vars')
      b[field] = { [text.slice(0, 100)]: text, 'podinfo.staging': text };
    else if (field === 'target.age_recipients') b.target = { age_recipients: [text] };
    else if (inner) b[outer] = { ...(b[outer] ?? { name: 'x' }), [inner]: text };
    else b[field] = text;
    return b;
  };

  it.each(references.map((r, i) => [i, r] as const))('create and preview bodies (reference %i)', (_i, opts) => {
    fc.assert(
      fc.property(fc.constantFrom(...fields), hostileText, (field, text) => {
        const start = process.hrtime.bigint();
        try {
          parseCreateRequest(withHostile(field, text), opts);
        } catch (e) {
          expect(e).toBeInstanceOf(ApiError);
        }
        expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(BOUND_MS);
      }),
      { numRuns: 400 },
    );
  });

  it('arbitrary JSON values as the body', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const start = process.hrtime.bigint();
        expect(() => parseCreateRequest(value, OPTS)).toThrow(ApiError);
        expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(BOUND_MS);
      }),
      { numRuns: 500 },
    );
  });
});
