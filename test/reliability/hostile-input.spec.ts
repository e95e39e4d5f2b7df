import fc from 'fast-check';
import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { api, eventCount, natsApi } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo, gitLog } from '../support/services';

jest.setTimeout(300_000);

/**
 * Every parser that sees request bytes, driven through the real service over REST and NATS with random
 * and adversarial input: each request is answered (a 4xx, never a hang or a 500) within a bound, the
 * service keeps answering others, and nothing is appended or pushed.
 */
describe('hostile input over REST and NATS: answered in bounded time, nothing appended', () => {
  const stack = useServiceStack();
  const remote = bareRepo();
  // Expired: checked after every other field, so a random value that happens to be valid still creates no run.
  const cert = makeRsaCert({ notBefore: new Date(2020, 0, 1), notAfter: new Date(2021, 0, 1) });
  let nats: Awaited<ReturnType<typeof natsApi>>;
  /** Per request, on a busy 2-core machine: generous, but a parser that loops never meets it. */
  const BOUND_MS = 10_000;

  beforeAll(async () => (nats = await natsApi(stack.nats.url)));
  afterAll(() => nats.close());

  /** Printable header text (what HTTP and NATS clients can send), with the runs patterns backtrack over. */
  const headerText = fc.oneof(
    fc.stringMatching(/^[\x20-\x7e]{0,200}$/),
    fc
      .tuple(fc.constantFrom('9', '-', '1e', '"', ',', ' '), fc.integer({ min: 1, max: 4000 }))
      .map(([unit, n]) => unit.repeat(n)),
  );
  const text = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 200 }), headerText);
  /** Raw JSON-ish bodies: truncated, doubled keys, deep nesting, random bytes. */
  const rawBody = fc.oneof(
    fc.json({ maxDepth: 5 }),
    fc.json({ maxDepth: 3 }).map((j) => j.slice(0, Math.max(1, Math.floor(j.length / 2)))),
    fc.stringMatching(/^[{}[\]",:\\a-c0-9 ]{0,200}$/),
    fc.integer({ min: 1, max: 200_000 }).map((n) => '['.repeat(n)),
    fc.integer({ min: 1, max: 50_000 }).map((n) => '{"a' + '\\'.repeat(n)),
    fc
      .record({ field: fc.constantFrom('cluster_name', 'domain', 'region', 'acme_email'), value: text })
      .map(({ field, value }) =>
        JSON.stringify({ ...createBody('hostile', remote.url, cert.certPem), [field]: value }),
      ),
  );

  async function within<T>(what: string, work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`${what} was not answered within ${BOUND_MS} ms`)), BOUND_MS)),
    );
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  const expectRefused = (status: number) => expect(status >= 400 && status < 500).toBe(true);

  it('bodies of create and preview', async () => {
    const before = await eventCount(stack.svc);
    await fc.assert(
      fc.asyncProperty(
        rawBody,
        fc.constantFrom('/api/v1/scaffolds', '/api/v1/scaffolds/preview'),
        async (body, path) => {
          expectRefused((await within(`REST ${path}`, api(stack.svc.base, 'POST', path, body))).status);
          expectRefused(
            (
              await within(
                `NATS ${path}`,
                nats.request(path.endsWith('preview') ? 'scaffolds.v1.preview' : 'scaffolds.v1.create', body),
              )
            ).status,
          );
        },
      ),
      { numRuns: 60 },
    );
    expect(await eventCount(stack.svc)).toBe(before);
    expect(gitLog(remote.dir)).toHaveLength(1);
  });

  it('headers: API keys, Idempotency-Key and Last-Event-ID', async () => {
    const before = await eventCount(stack.svc);
    const body = { ...createBody('hostile-headers', remote.url, cert.certPem), domain: 'not a domain' };
    await fc.assert(
      fc.asyncProperty(
        headerText,
        fc.constantFrom('x-api-key', 'idempotency-key', 'last-event-id'),
        async (value, header) => {
          const rest =
            header === 'last-event-id'
              ? api(
                  stack.svc.base,
                  'GET',
                  '/api/v1/scaffolds/00000000-0000-4000-8000-000000000000/events/stream',
                  undefined,
                  { [header]: value },
                )
              : api(stack.svc.base, 'POST', '/api/v1/scaffolds', body, { [header]: value });
          expectRefused((await within(`REST ${header}`, rest)).status);
          const key = header === 'x-api-key' ? value : undefined;
          const extra = header === 'x-api-key' ? {} : { [header]: value };
          expectRefused((await within(`NATS ${header}`, nats.request('scaffolds.v1.create', body, key, extra))).status);
        },
      ),
      { numRuns: 60 },
    );
    expect(await eventCount(stack.svc)).toBe(before);
  });

  it('run ids, cursors and query parameters', async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.constantFrom('id', 'cursor', 'limit', 'status', 'since', 'type'),
        async (value, field) => {
          if (field === 'id') {
            // Prefixed, so "", "." and ".." stay an id instead of becoming the list route once the URL is normalised.
            const id = `x${value}`;
            expect(
              (await within('REST id', api(stack.svc.base, 'GET', `/api/v1/scaffolds/${encodeURIComponent(id)}`)))
                .status,
            ).toBe(404);
            expect((await within('NATS id', nats.request('scaffolds.v1.get', { id }))).status).toBe(404);
            return;
          }
          const route = ['since', 'type'].includes(field)
            ? ['/api/v1/events', 'scaffolds.v1.events.all']
            : ['/api/v1/scaffolds', 'scaffolds.v1.list'];
          const rest = await within(
            `REST ${field}`,
            api(stack.svc.base, 'GET', `${route[0]}?${field}=${encodeURIComponent(value)}`),
          );
          const overNats = await within(`NATS ${field}`, nats.request(route[1], { [field]: value }));
          expect(rest.status).toBeLessThan(500);
          expect(overNats.status).toBe(rest.status);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('keeps answering everyone else afterwards', async () => {
    const started = Date.now();
    expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds?limit=1')).status).toBe(200);
    expect((await nats.request('scaffolds.v1.list', { limit: 1 })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  });
});
