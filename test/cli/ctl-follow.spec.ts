import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { main } from '../../src/ctl';

/**
 * How `create --wait` keeps following when the service ends a stream early or has none to spare: answers
 * the real service gives only under load or after SSE_MAX_SECONDS, played here by a small HTTP server so
 * that each path is taken every time (test/service/ctl-client.spec.ts follows real runs of the real service).
 */
const RUN = '6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60';
const EVENTS = [
  {
    seq: 1,
    type: 'ScaffoldRequested',
    time: '2026-12-05T10:00:00.000Z',
    data: { cluster_name: 'c1', domain: 'c1.example.com', repo_url: 'file:///x', branch: 'main' },
  },
  { seq: 2, type: 'InfraPushed', time: '2026-12-05T10:00:01.000Z', data: { commit: 'a'.repeat(40), files_changed: 3 } },
  {
    seq: 3,
    type: 'ScaffoldFailed',
    time: '2026-12-05T10:00:02.000Z',
    data: { step: 'cert-fetch', reason: 'no certificate' },
  },
];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

async function createAndWait(server: Server, ...extra: string[]) {
  const lines: string[] = [];
  const errors: string[] = [];
  const code = await main(
    ['create', '-f', '-', '--wait', ...extra],
    {
      SCAFFOLDER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      SCAFFOLDER_API_KEY: 'key-0123456789abcdef',
    },
    (l) => lines.push(l),
    (t) => errors.push(t),
    { stdin: async () => '{"cluster_name":"c1"}' },
  );
  return { code, lines, errors };
}

const created = (res: ServerResponse) =>
  res
    .writeHead(202, { 'content-type': 'application/json' })
    .end(JSON.stringify({ id: RUN, status: 'queued', step: 'infra-pass' }));
const sse = (e: (typeof EVENTS)[number]) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

describe('create --wait follows a run', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('resumes a stream the service ended early from the last event it printed (Last-Event-ID), printing each event once', async () => {
    const resumedFrom: Array<string | undefined> = [];
    server = await serve((req, res) => {
      if (req.method === 'POST') return created(res);
      const after = req.headers['last-event-id'] as string | undefined;
      resumedFrom.push(after);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Each stream ends after one event, as SSE_MAX_SECONDS ends one.
      const next = EVENTS.find((e) => e.seq > Number(after ?? 0))!;
      res.end(`: keep-alive\n\n${sse(next)}`);
    });
    const r = await createAndWait(server);
    expect(r.code).toBe(3);
    expect(r.errors).toEqual([]);
    expect(resumedFrom).toEqual([undefined, '1', '2']);
    expect(r.lines.slice(1).map((l) => l.split(/\s+/)[1])).toEqual([
      'ScaffoldRequested',
      'InfraPushed',
      'ScaffoldFailed',
      RUN,
    ]);
    expect(r.lines.at(-1)).toBe(`run ${RUN} failed`);
  });

  it('tries a stream that broke mid-event again, from the last event it printed', async () => {
    let connections = 0;
    server = await serve((req, res) => {
      if (req.method === 'POST') return created(res);
      connections++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const after = Number(req.headers['last-event-id'] ?? 0);
      if (connections === 1) {
        // One whole event, half of the next, then the connection is gone.
        res.write(sse(EVENTS[0]) + sse(EVENTS[1]).slice(0, 20));
        return setTimeout(() => res.destroy(), 50);
      }
      res.end(
        EVENTS.filter((e) => e.seq > after)
          .map(sse)
          .join(''),
      );
    });
    const r = await createAndWait(server);
    expect([r.code, r.errors, connections]).toEqual([3, [], 2]);
    expect(r.lines.slice(1, -1).map((l) => l.split(/\s+/)[1])).toEqual([
      'ScaffoldRequested',
      'InfraPushed',
      'ScaffoldFailed',
    ]);
  });

  it('asks for the events instead when the service has no stream to spare (429), and says so once', async () => {
    let looks = 0;
    server = await serve((req, res) => {
      if (req.method === 'POST') return created(res);
      if (req.url!.endsWith('/events/stream'))
        return res
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '5' })
          .end(JSON.stringify({ error: { code: 'too_many_streams', message: 'at most 1 streams per key' } }));
      looks++;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ items: EVENTS.slice(0, looks === 1 ? 2 : 3) }));
    });
    const r = await createAndWait(server);
    expect(r.code).toBe(3);
    expect(r.errors).toEqual([
      "scaffolderctl: follow refused: 429 too_many_streams: at most 1 streams per key; asking for the run's events every 2 s instead\n",
    ]);
    expect(looks).toBe(2);
    expect(r.lines.slice(1, -1).map((l) => l.split(/\s+/)[1])).toEqual([
      'ScaffoldRequested',
      'InfraPushed',
      'ScaffoldFailed',
    ]);
  });

  it('stops waiting after --timeout with exit 5, saying where the run is (the run goes on)', async () => {
    server = await serve((req, res) => {
      if (req.method === 'POST') return created(res);
      if (req.url!.endsWith('/events/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.write(sse(EVENTS[0])); // and nothing more: the run is slow
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: RUN, status: 'running', step: 'infra-pass' }));
    });
    const r = await createAndWait(server, '--timeout', '1');
    expect(r.code).toBe(5);
    expect(r.errors).toEqual([`scaffolderctl: stopped waiting: run ${RUN} is still running at infra-pass\n`]);
    server.closeAllConnections();
  });

  it('refuses an event larger than 1 MiB instead of buffering it (exit 1, one line)', async () => {
    server = await serve((req, res) => {
      if (req.method === 'POST') return created(res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${'x'.repeat(1024 * 1024 + 10)}`);
    });
    const r = await createAndWait(server);
    expect([r.code, r.errors]).toEqual([
      1,
      ['scaffolderctl: follow: an event of the stream is larger than 1048576 bytes\n'],
    ]);
  });
});

describe("what scaffolderctl prints of the service's text (the built command)", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('writes escape sequences in a run message or reason as text, never to the terminal', async () => {
    const hostile = 'repository marker: \u001b[2J\u001b]0;owned\u0007\u009b31m fake line\rcleared';
    server = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: RUN,
          status: 'failed',
          step: 'infra-pass',
          message: hostile,
          cluster_name: 'c1',
          domain: 'c1.example.com',
          region: 'eu-west-1',
          repo_url: 'file:///x',
          branch: 'main',
        }),
      ),
    );
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { join } = await import('node:path');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(__dirname, '../../bin/scaffolderctl'), 'get', RUN],
      {
        env: {
          PATH: process.env.PATH,
          SCAFFOLDER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          SCAFFOLDER_API_KEY: 'key-0123456789abcdef',
        },
      },
    );
    // eslint-disable-next-line no-control-regex -- control characters are what must not be printed
    expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(stdout).toContain('repository marker: \\u001b[2J\\u001b]0;owned\\u0007\\u009b31m fake line\\rcleared');
  });
});
