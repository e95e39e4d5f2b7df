import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, symlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { createBody } from '../support/run-fixtures';
import { api, natsApi, untilTerminal, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { readSse } from '../support/sse';
import { bareRepo } from '../support/services';

jest.setTimeout(120_000);

const KEYS = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef00',
  reader: 'reader-key-0123456789abcdef',
  burst: 'burst-key-0123456789abcdef',
  busy: 'busy-key-0123456789abcdef00',
  watcher: 'watcher-key-0123456789abcd',
  legacy: 'legacy-key-0123456789abcdef',
};
const UNREACHABLE = 'https://127.0.0.1:9/fleet.git';

/**
 * A create body whose run fails at once (its branch does not exist): for checks of what a create
 * is answered (quotas, idempotency), which would otherwise wait for a whole scaffold to end.
 */
function quicklyFailingBody(cluster: string, certPem: string) {
  const body = createBody(cluster, bareRepo().url, certPem);
  return { ...body, repo: { ...body.repo, branch: 'no-such-branch' } };
}

/**
 * The edge as an attacker holding a valid key sees it: owners and roles, quotas, idempotency, body
 * and header checks, repository URLs and branches, links in the working copy. Every refusal appends
 * nothing and pushes nothing.
 */
describe('abuse resistance at the edge (REST and NATS)', () => {
  const stack = useServiceStack(() => ({
    API_KEYS: `alice:operator:${KEYS.alice},bob:operator:${KEYS.bob},reader:reader:${KEYS.reader},burst:operator:${KEYS.burst},busy:operator:${KEYS.busy},watcher:operator:${KEYS.watcher},legacy=${KEYS.legacy}`,
    MAX_ACTIVE_RUNS_PER_KEY: '2',
    MAX_CREATES_PER_MINUTE_PER_KEY: '5',
    MAX_SSE_STREAMS_PER_KEY: '2',
    SSE_MAX_SECONDS: '2',
    GIT_ALLOWED_HOSTS: '127.0.0.1,*.example.com',
  }));
  const cert = makeRsaCert();
  const as = (key: string) => ({ 'x-api-key': key });
  /**
   * What a refused request must not have appended: runs (ScaffoldRequested events), counted in the stream.
   * Not every event: runs of earlier tests may still be retrying or cancelling meanwhile.
   */
  const requestCount = async () =>
    (await stack.svc.runtime.store.readRange({ fromSeq: 1, limit: 100_000, types: ['ScaffoldRequested'] })).events
      .length;
  /** The events of one run (a refused cancel or redrive would have appended to it). */
  const runEvents = async (id: string) => (await stack.svc.runtime.store.readRun(id)).events.length;
  let nats: Awaited<ReturnType<typeof natsApi>>;
  beforeAll(async () => (nats = await natsApi(stack.nats.url)));
  afterAll(() => nats?.close());

  describe('owners and roles', () => {
    let run: string;
    beforeAll(async () => {
      const created = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('owned', bareRepo().url, cert.certPem),
        as(KEYS.alice),
      );
      run = created.json.id;
      await untilTerminal(stack.svc.base, run);
    });

    it('another key gets 404 for every view of and action on the run, over REST and NATS, and does not see it in lists or the audit feed', async () => {
      const before = await runEvents(run);
      for (const [method, path] of [
        ['GET', `/api/v1/scaffolds/${run}`],
        ['GET', `/api/v1/scaffolds/${run}/logs`],
        ['GET', `/api/v1/scaffolds/${run}/events`],
        ['POST', `/api/v1/scaffolds/${run}/cancel`],
        ['POST', `/api/v1/scaffolds/${run}/redrive`],
      ]) {
        expect([method, path, (await api(stack.svc.base, method, path, undefined, as(KEYS.bob))).status]).toEqual([
          method,
          path,
          404,
        ]);
      }
      expect((await readSse(`${stack.svc.base}/api/v1/scaffolds/${run}/events/stream`, as(KEYS.bob))).status).toBe(404);
      for (const subject of ['get', 'logs', 'events', 'cancel', 'redrive'])
        expect([subject, (await nats.request(`scaffolds.v1.${subject}`, { id: run }, KEYS.bob)).status]).toEqual([
          subject,
          404,
        ]);
      const list = await api(stack.svc.base, 'GET', '/api/v1/scaffolds?limit=500', undefined, as(KEYS.bob));
      expect(list.json.items.map((r: any) => r.id)).not.toContain(run);
      expect(
        (await nats.request('scaffolds.v1.list', { limit: 500 }, KEYS.bob)).json.items.map((r: any) => r.id),
      ).not.toContain(run);
      const audit = await api(stack.svc.base, 'GET', '/api/v1/events?limit=1000', undefined, as(KEYS.bob));
      expect(audit.json.items.filter((e: any) => e.run_id === run)).toEqual([]);
      expect(
        (await nats.request('scaffolds.v1.events.all', { limit: 1000 }, KEYS.bob)).json.items.filter(
          (e: any) => e.run_id === run,
        ),
      ).toEqual([]);
      expect(await runEvents(run)).toBe(before);
      // The owner and the admin (API_KEY) see it.
      expect(
        (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${run}`, undefined, as(KEYS.alice))).json.status,
      ).toBe('succeeded');
      expect(
        (await api(stack.svc.base, 'GET', '/api/v1/scaffolds?limit=500', undefined, as(KEYS.alice))).json.items.map(
          (r: any) => r.id,
        ),
      ).toContain(run);
      expect(
        (await api(stack.svc.base, 'GET', '/api/v1/events?limit=1000', undefined, as(KEYS.alice))).json.items.some(
          (e: any) => e.run_id === run,
        ),
      ).toBe(true);
      expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${run}`)).status).toBe(200);
      expect((await nats.request('scaffolds.v1.get', { id: run })).status).toBe(200);
    });

    it('a reader key may read its own runs but not create, preview, cancel or re-drive (403); name=key entries are operators', async () => {
      const before = await requestCount();
      const refused = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('reader', bareRepo().url, cert.certPem),
        as(KEYS.reader),
      );
      expect(refused.status).toBe(403);
      expect(refused.json.error).toEqual({
        code: 'forbidden',
        message: 'key "reader" has the reader role: it may only read its own runs',
      });
      expect(
        (
          await api(
            stack.svc.base,
            'POST',
            '/api/v1/scaffolds/preview',
            createBody('reader', bareRepo().url, cert.certPem),
            as(KEYS.reader),
          )
        ).status,
      ).toBe(403);
      expect(
        (await nats.request('scaffolds.v1.create', createBody('reader', bareRepo().url, cert.certPem), KEYS.reader))
          .status,
      ).toBe(403);
      expect(await requestCount()).toBe(before);
      expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds', undefined, as(KEYS.reader))).json.items).toEqual(
        [],
      );
      const legacy = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('legacy', bareRepo().url, cert.certPem),
        as(KEYS.legacy),
      );
      expect(legacy.status).toBe(202);
      expect(legacy.json.status).toBe('queued');
      await untilTerminal(stack.svc.base, legacy.json.id);
    });
  });

  describe('quotas: 429 with Retry-After', () => {
    it('active runs per key', async () => {
      const first = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('busy-1', UNREACHABLE, cert.certPem),
        as(KEYS.busy),
      );
      const second = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('busy-2', UNREACHABLE, cert.certPem),
        as(KEYS.busy),
      );
      await waitFor('both in the read-model', async () =>
        (await api(stack.svc.base, 'GET', '/api/v1/scaffolds', undefined, as(KEYS.busy))).json.items.length === 2
          ? true
          : undefined,
      );
      const third = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('busy-3', bareRepo().url, cert.certPem),
        as(KEYS.busy),
      );
      expect([third.status, third.json.error.code, third.headers.get('retry-after')]).toEqual([
        429,
        'too_many_active_runs',
        '30',
      ]);
      for (const r of [first, second])
        await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${r.json.id}/cancel`, undefined, as(KEYS.busy));
    });

    it('SSE streams per key, and a maximum stream duration after which the client resumes with Last-Event-ID', async () => {
      const created = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('watched', UNREACHABLE, cert.certPem),
        as(KEYS.watcher),
      );
      const id = created.json.id;
      const url = `${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`;
      const started = Date.now();
      const open = [readSse(url, as(KEYS.watcher)), readSse(url, as(KEYS.watcher))];
      await new Promise((r) => setTimeout(r, 300));
      const third = await fetch(url, { headers: as(KEYS.watcher) });
      expect([third.status, third.headers.get('retry-after')]).toEqual([429, '10']);
      // The two open streams end at SSE_MAX_SECONDS although the run goes on.
      const ended = await Promise.all(open);
      expect(Date.now() - started).toBeLessThan(6000);
      expect(ended.every((s) => s.status === 200 && s.events.length >= 1)).toBe(true);
      const last = ended[0].events.at(-1)!.id;
      const resumed = await readSse(url, { ...as(KEYS.watcher), 'last-event-id': last });
      expect(resumed.events.every((e) => Number(e.id) > Number(last))).toBe(true);
      await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/cancel`, undefined, as(KEYS.watcher));
    });
  });

  describe('requests the edge refuses, appending nothing', () => {
    let before: number;
    beforeEach(async () => (before = await requestCount()));
    afterEach(async () => expect(await requestCount()).toBe(before));

    it('an Idempotency-Key used again with another body: 422, over REST and NATS', async () => {
      const first = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', quicklyFailingBody('idem', cert.certPem), {
        'idempotency-key': 'same-key',
      });
      before = await requestCount();
      const again = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('idem-other', bareRepo().url, cert.certPem),
        { 'idempotency-key': 'same-key' },
      );
      expect([again.status, again.json.error.code]).toEqual([422, 'idempotency_key_reused']);
      const overNats = await nats.request(
        'scaffolds.v1.create',
        createBody('idem-other', bareRepo().url, cert.certPem),
        undefined,
        { 'Idempotency-Key': 'same-key' },
      );
      expect([overNats.status, overNats.json.error.code]).toEqual([422, 'idempotency_key_reused']);
      await untilTerminal(stack.svc.base, first.json.id);
      before = await requestCount();
    });

    it('credentials in repo.url (the secret appears in no answer), hosts outside GIT_ALLOWED_HOSTS, branches git would not take', async () => {
      const token = 'ghp_SuperSecretToken1234567890';
      for (const [repo, field, message] of [
        [{ url: `https://user:${token}@git.example.com/x.git` }, 'repo.url', /must not carry credentials/],
        [{ url: `https://${token}@git.example.com/x.git` }, 'repo.url', /must not carry credentials/],
        [{ url: 'https://git.evil.test/x.git' }, 'repo.url', /host git\.evil\.test is not one of GIT_ALLOWED_HOSTS/],
        [{ url: 'https://example.com/x.git' }, 'repo.url', /host example\.com is not one of GIT_ALLOWED_HOSTS/],
        [{ url: 'https://git.example.com/x.git', branch: 'HEAD' }, 'repo.branch', /"HEAD" is not a branch name/],
        [{ url: 'https://git.example.com/x.git', branch: 'refs/heads/x' }, 'repo.branch', /not a ref/],
        [{ url: 'https://git.example.com/x.git', branch: 'a/.b' }, 'repo.branch', /must not begin with "\."/],
        [{ url: 'https://git.example.com/x.git', branch: 'a.lock' }, 'repo.branch', /\.lock/],
      ] as const) {
        const body = { ...createBody('edge', 'x', cert.certPem), repo };
        const rest = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body);
        expect([rest.status, rest.json.error.message]).toEqual([
          400,
          expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}: .*${message.source}`)),
        ]);
        expect(rest.text).not.toContain(token);
        const overNats = await nats.request('scaffolds.v1.create', body);
        expect(overNats.status).toBe(400);
        expect(JSON.stringify(overNats.json)).not.toContain(token);
      }
    });

    it('a run stored with credentials in its URL (accepted before this check) is shown with them redacted', async () => {
      const { stamp } = await import('#libs/events');
      const { randomUUID } = await import('node:crypto');
      const id = randomUUID();
      const legacy = {
        ...createBody('legacy-url', 'x', cert.certPem),
        repo_url: 'https://deploy:OldSecret-123456@git.example.com/x.git',
      } as any;
      const data = {
        cluster_name: 'legacy-url',
        domain: legacy.domain,
        region: legacy.region,
        acme_email: legacy.acme_email,
        repo_url: legacy.repo_url,
        branch: 'main',
        target: { kind: 'sealing_cert', fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00.000Z' },
        requested_by: 'default',
      };
      await stack.svc.runtime.store.append(
        id,
        [stamp({ type: 'ScaffoldRequested', data } as any, id, id, new Date(), null)],
        0,
      );
      const shown = await waitFor(
        'the projection',
        async () => (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json,
      );
      const events = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/events`);
      const list = await api(stack.svc.base, 'GET', '/api/v1/scaffolds?limit=500');
      expect(shown.repo_url).toBe('https://***@git.example.com/x.git');
      for (const text of [JSON.stringify(shown), events.text, list.text])
        expect(text).not.toContain('OldSecret-123456');
      await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/cancel`);
      before = await requestCount();
    });

    it('every problem of a request at once, unknown fields named as such, over REST and NATS alike', async () => {
      const { cluster_name: _omitted, ...rest } = createBody('x', 'https://git.example.com/x.git', cert.certPem);
      const body = { ...rest, clustr_name: 'typo', domain: 'not a domain' };
      const expected = [
        { field: 'clustr_name', problem: 'unknown field' },
        { field: 'cluster_name', problem: 'is required' },
        // Field problems too, beside the shape's (#49: one problem at a time made the caller come back).
        {
          field: 'domain',
          problem: 'must be a lowercase DNS name with at least two labels (for example apps.example.com)',
        },
      ];
      expect((await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body)).json.error.details).toEqual(expected);
      expect((await nats.request('scaffolds.v1.create', body)).json.error.details).toEqual(expected);
      const values = {
        ...createBody('x', 'https://git.example.com/x.git', cert.certPem),
        domain: 'not a domain',
        region: 'EU WEST',
      };
      expect((await nats.request('scaffolds.v1.create', values)).json.error.details.map((d: any) => d.field)).toEqual([
        'domain',
        'region',
      ]);
    });

    it('a scheme or host in capitals is stored (and given to git) in lower case', async () => {
      const remote = bareRepo();
      const created = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('upper', remote.url.replace('file://', 'FILE://'), cert.certPem),
      );
      expect(created.json.repo_url).toBe(remote.url);
      expect((await untilTerminal(stack.svc.base, created.json.id)).status).toBe('succeeded');
      before = await requestCount();
    });

    it('bodies and headers: duplicate keys, a chunked non-JSON body, an out-of-range Last-Event-ID; no X-Powered-By', async () => {
      const dup = `{"cluster_name":"a","cluster_name":"b"}`;
      const rest = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', dup);
      expect([rest.status, rest.json.error.message]).toEqual([
        400,
        'body: key "cluster_name" appears twice in one object',
      ]);
      expect((await nats.request('scaffolds.v1.create', dup)).json.error.message).toBe(
        'body: key "cluster_name" appears twice in one object',
      );
      const chunked = await new Promise<number>((resolve, reject) => {
        const url = new URL(`${stack.svc.base}/api/v1/scaffolds`);
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: {
              'x-api-key': 'test-api-key-0123456789abcdef',
              'content-type': 'text/plain',
              'transfer-encoding': 'chunked',
            },
          },
          (res) => resolve(res.statusCode!),
        );
        req.on('error', reject);
        req.write(JSON.stringify(createBody('chunked', bareRepo().url, cert.certPem)));
        req.end();
      });
      expect(chunked).toBe(415);
      const listed = await api(stack.svc.base, 'GET', '/api/v1/scaffolds?limit=1');
      const id = listed.json.items[0].id;
      const sse = await fetch(`${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`, {
        headers: { 'x-api-key': 'test-api-key-0123456789abcdef', 'last-event-id': '99999999999999999999' },
      });
      expect([sse.status, ((await sse.json()) as any).error.message]).toEqual([
        400,
        'Last-Event-ID: must be a stream sequence this API sent (a number)',
      ]);
      expect(listed.headers.get('x-powered-by')).toBeNull();
    });
  });

  it('pages through runs that share a creation millisecond without losing or repeating one', async () => {
    const { ds } = stack.svc.runtime;
    const [template] = await ds.query(`SELECT * FROM scaffold_runs LIMIT 1`);
    const same = new Date('2026-01-01T00:00:00.000Z');
    const ids = Array.from({ length: 9 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
    for (const id of ids) {
      await ds.query(
        `INSERT INTO scaffold_runs (id, status, step, message, cluster_name, repo_url, branch, created_at, updated_at, last_seq, state) VALUES ($1, 'succeeded', NULL, '', $2, $3, 'main', $4, $4, 0, $5)`,
        [id, template.cluster_name, template.repo_url, same, template.state],
      );
    }
    const seen: string[] = [];
    for (let cursor: string | null = null, pages = 0; pages < 100; pages++) {
      const page: any = await api(
        stack.svc.base,
        'GET',
        `/api/v1/scaffolds?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.json.items.map((r: any) => r.id));
      cursor = page.json.next_cursor;
      if (!cursor) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(ids));
  });

  describe('links in the working copy and the reference', () => {
    it('a target repository whose clusters/ is a link to a folder elsewhere: the run fails naming it and nothing is written there', async () => {
      const remote = bareRepo();
      const outside = tempDir('outside');
      const clone = tempDir('linked-clone');
      execFileSync('git', ['clone', '-q', remote.dir, clone]);
      symlinkSync(outside, join(clone, 'clusters'));
      const g = (...a: string[]) =>
        execFileSync('git', ['-C', clone, '-c', 'user.name=t', '-c', 'user.email=t@x', ...a], { stdio: 'ignore' });
      g('add', 'clusters');
      g('commit', '-m', 'clusters is a link');
      g('push', 'origin', 'HEAD:main');
      const created = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        createBody('linked', remote.url, cert.certPem),
      );
      const done = await untilTerminal(stack.svc.base, created.json.id);
      expect(done.status).toBe('failed');
      // Refused before the pass reads anything (the check a preview makes applies to runs).
      expect(done.message).toMatch(/links that lead out of it, which are never read or written through: clusters$/);
      expect(readdirSync(outside)).toEqual([]);
    });
  });

  it('a reference whose shared folder holds a link out of the reference is refused naming the link', async () => {
    const { SHIPPED_TEMPLATE, generate } = await import('#libs/generator');
    const reference = tempDir('linked-reference');
    execFileSync('cp', ['-r', `${SHIPPED_TEMPLATE}/.`, reference]);
    const options = {
      templateDir: reference,
      referenceEnv: 'development',
      clusterName: 'x',
      domain: 'x.example.com',
      region: 'eu-west-1',
      acmeEmail: 'a@x.example.com',
      pass: 'full' as const,
      sealingCertPem: cert.certPem,
      registry: { server: 'registry.example.com', username: 'puller', password: 'RegistryPw-0123456789' },
      validate: false,
    };
    // Which shared folders a pass copies, from a first run into an empty repository.
    const first = await generate({ ...options, repoDir: tempDir('reference-probe') });
    const shared = first.summary.shared_paths_copied[0];
    symlinkSync('/etc', join(reference, shared, 'escape'));
    const repo = tempDir('linked-reference-target');
    await expect(generate({ ...options, repoDir: repo })).rejects.toThrow(
      `${shared}/escape in the reference is a symbolic link to /etc, outside the reference; refusing to copy it`,
    );
    expect(existsSync(join(repo, shared))).toBe(false);
  });
});

describe('quota of creates per key and minute (its own service: active runs do not limit here)', () => {
  const burstStack = useServiceStack(() => ({
    API_KEYS: `burst:operator:${KEYS.burst}`,
    MAX_CREATES_PER_MINUTE_PER_KEY: '5',
    MAX_ACTIVE_RUNS_PER_KEY: '100',
  }));
  const cert = makeRsaCert();
  const as = (key: string) => ({ 'x-api-key': key });
  // The quota counts creates, whatever the runs do.
  const burstBody = (cluster: string) => quicklyFailingBody(cluster, cert.certPem);
  let nats: Awaited<ReturnType<typeof natsApi>>;
  beforeAll(async () => (nats = await natsApi(burstStack.nats.url)));
  afterAll(() => nats?.close());

  it('creates per key and minute: a burst is refused past the limit, over REST and NATS, appending nothing for the refused', async () => {
    const answers = [];
    for (let i = 0; i < 8; i++)
      answers.push(
        await api(burstStack.svc.base, 'POST', '/api/v1/scaffolds', burstBody(`burst-${i}`), as(KEYS.burst)),
      );
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 429, 429, 429]);
    expect(answers[5].json.error.code).toBe('too_many_creates');
    expect(Number(answers[5].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const overNats = await nats.request('scaffolds.v1.create', burstBody('burst-nats'), KEYS.burst);
    expect([overNats.status, overNats.json.error.code]).toEqual([429, 'too_many_creates']);
    expect(Number(overNats.retryAfter)).toBeGreaterThanOrEqual(1);
    const accepted = answers.filter((a) => a.status === 202).map((a) => a.json.id);
    const all = (await api(burstStack.svc.base, 'GET', '/api/v1/events?type=ScaffoldRequested&limit=1000')).json.items;
    expect(
      all
        .filter((e: any) => e.data.requested_by === 'burst')
        .map((e: any) => e.run_id)
        .sort(),
    ).toEqual(accepted.sort());
    await Promise.all(accepted.map((id) => untilTerminal(burstStack.svc.base, id)));
  });
});
