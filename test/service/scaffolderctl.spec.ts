import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { durableNameFor, keptPlans, stepNames } from '#libs/events';
import { main } from '../../src/ctl';
import { makeRsaCert } from '../support/certs';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { bareRepo, readModelRows } from '../support/services';
import { API_KEY, api, waitFor } from '../support/service';
import { tempDir } from '../support/files';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

describe('scaffolderctl against real NATS and PostgreSQL', () => {
  const stack = useServiceStack();
  const cert = makeRsaCert();
  const remote = bareRepo();
  const ids: string[] = [];
  // An admin key, as redrive and cancel need: in a file, never on the command line.
  const keyFile = join(tempDir('ctl-key'), 'admin.key');
  writeFileSync(keyFile, `${API_KEY}\n`, { mode: 0o600 });
  const ctl = async (...argv: string[]) => {
    const lines: string[] = [];
    const errors: string[] = [];
    const code = await main(
      argv,
      {
        NATS_URL: stack.nats.url,
        DATABASE_URL: stack.db.url,
        LOG_LEVEL: 'error',
        SCAFFOLDER_URL: stack.svc.base,
        SCAFFOLDER_API_KEY_FILE: keyFile,
      },
      (l) => lines.push(l),
      (t) => errors.push(t),
    );
    return { code, lines, errors };
  };
  const rows = () => readModelRows(stack.db.url);
  const sql = async (q: string) => {
    const c = new Client({ connectionString: stack.db.url });
    await c.connect();
    await c.query(q);
    await c.end();
  };

  beforeAll(async () => {
    for (const cluster of ['ops-a', 'ops-b']) {
      const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', createBody(cluster, remote.url, cert.certPem));
      ids.push(r.json.id);
      await waitFor('run', async () =>
        (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}`)).json.status === 'succeeded'
          ? true
          : undefined,
      );
    }
    await waitFor('projection', async () =>
      (await api(stack.svc.base, 'GET', '/api/v1/scaffolds?status=succeeded')).json.items.length === 2
        ? true
        : undefined,
    );
  });

  it('prints a run history', async () => {
    const { code, lines } = await ctl('events', ids[0], '--json');
    expect(code).toBe(0);
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect((await ctl('events', '00000000-0000-4000-8000-000000000000')).code).toBe(2);
  });

  it('shows stream and consumer state with lag', async () => {
    // A run is terminal once its last event is appended; the durables ack it a moment later (a busy machine: later).
    // Every durable with no lag and nothing pending within waitFor's minute is the check (it fails the test otherwise).
    const caughtUp = (info: any) => info.consumers.every((c: any) => c.lag === 0 && c.pending === 0);
    const info = await waitFor('every durable to ack the last event', async () => {
      const read = JSON.parse((await ctl('stream-info', '--json')).lines[0]);
      return caughtUp(read) ? read : undefined;
    });
    expect(info.stream).toMatchObject({ name: 'SCAFFOLD_EVENTS', messages: 12, last_seq: 12 });
    // The projector and one durable per step of the kept run plans (the push plan's and the merge-request plan's).
    expect(info.consumers.map((c: any) => c.name).sort()).toEqual(
      ['projector', ...stepNames(keptPlans()).map(durableNameFor)].sort(),
    );
    expect(info.consumers.map((c: any) => c.name)).toContain('step-infra-merge');
    const status = JSON.parse((await ctl('status', '--json', '--stuck-minutes', '0')).lines[0]);
    expect(status.stuck_runs).toEqual([]);
  });

  it('replays by sequence, time and run, and re-feeds a lost read-model row', async () => {
    expect((await ctl('replay', '--from-seq', '1', '--json')).lines).toHaveLength(12);
    expect((await ctl('replay', '--from-seq', '7', '--json')).lines.map((l) => JSON.parse(l).seq)).toEqual([
      7, 8, 9, 10, 11, 12,
    ]);
    expect((await ctl('replay', '--since', '2000-01-01T00:00:00Z', '--run', ids[1], '--json')).lines).toHaveLength(6);
    expect((await ctl('replay', '--since', new Date(Date.now() + 60_000).toISOString())).lines).toEqual([]);
    const before = await rows();
    await sql(`DELETE FROM scaffold_runs WHERE id = '${ids[0]}'`);
    const refeed = await ctl('replay', '--from-seq', '1', '--apply', '--json');
    expect(JSON.parse(refeed.lines[0])).toEqual({ replayed: 12, applied: 6 });
    expect(await rows()).toEqual(before);
  });

  it('rebuilds the projection into a new table and swaps it in while reads go on; the result equals the live rows', async () => {
    const live = await rows();
    let reading = true;
    const statuses: number[] = [];
    const reader = (async () => {
      while (reading) statuses.push((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${ids[1]}`)).status);
    })();
    const { code, lines } = await ctl('rebuild-projection', '--json');
    reading = false;
    await reader;
    expect(code).toBe(0);
    expect(JSON.parse(lines[0])).toMatchObject({ events: 12, rows: 2 });
    expect(await rows()).toEqual(live);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200)).toBe(true);
    // The projection keeps working on the swapped-in table.
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', createBody('ops-c', remote.url, cert.certPem));
    await waitFor('run after rebuild', async () =>
      (await api(stack.svc.base, 'GET', '/api/v1/scaffolds?status=succeeded')).json.items.some(
        (i: any) => i.id === r.json.id,
      )
        ? true
        : undefined,
    );
    ids.push(r.json.id);
  });

  it('tails: the last events first, then new ones; and re-drives only runs that are not finished', async () => {
    const lastTwo = (await ctl('events', ids[1], '--json')).lines.slice(-2).map((l) => JSON.parse(l).seq);
    const recent = await ctl('tail', '--run', ids[1], '--count', '2', '--new', '0', '--json');
    expect(recent.lines.map((l) => JSON.parse(l).seq)).toEqual(lastTwo);
    const tail = ctl('tail', '--count', '0', '--new', '1', '--json');
    await new Promise((r) => setTimeout(r, 500));
    const res = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', createBody('ops-d', remote.url, cert.certPem));
    const { lines } = await tail;
    expect(JSON.parse(lines[0])).toMatchObject({ type: 'ScaffoldRequested', run_id: res.json.id });
    // Through the service's API now (#28), no longer appended by the tool: a finished run is refused (409, exit 1).
    const finished = await ctl('redrive', ids[0]);
    expect(finished.code).toBe(1);
    expect(finished.errors.join('')).toMatch(/^scaffolderctl: redrive refused: 409 \S+: .+\n$/);
  });

  it('cancels and re-drives through the API with an admin key; refusals are one line (exit 1), a missing URL or key is a usage error (exit 2)', async () => {
    const run = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', createBody('ops-e', remote.url, cert.certPem));
    const cancelled = await ctl('cancel', run.json.id, '--json');
    expect([cancelled.code, cancelled.errors]).toEqual([0, []]);
    expect(JSON.parse(cancelled.lines[0]).id).toBe(run.json.id);
    const wrongKey = join(tempDir('ctl-key'), 'wrong.key');
    writeFileSync(wrongKey, 'not-a-key-0123456789abcdef', { mode: 0o600 });
    const refused = await ctl('redrive', ids[0], '--api-key-file', wrongKey);
    expect([refused.code, refused.errors.join('')]).toEqual([
      1,
      expect.stringMatching(/^scaffolderctl: redrive refused: 401 /),
    ]);
    const noService = await main(
      ['cancel', ids[0]],
      {},
      () => undefined,
      () => undefined,
    );
    expect(noService).toBe(2);
    const unreachable = await ctl('cancel', ids[0], '--url', 'http://127.0.0.1:9');
    expect([unreachable.code, unreachable.errors.join('')]).toEqual([1, expect.stringMatching(/could not be reached/)]);
  });

  it('is a bin of the package with help for every command, its options and the environment it reads', () => {
    const bin = (...args: string[]) =>
      spawnSync(process.execPath, [join(__dirname, '../../bin/scaffolderctl'), ...args], { encoding: 'utf8' });
    const r = bin('--help');
    expect(r.status).toBe(0);
    for (const word of [
      'events RUN',
      'tail',
      'replay',
      'rebuild-projection',
      'stream-info',
      'status',
      'redrive RUN',
      'cancel RUN',
      'SCAFFOLDER_URL',
      'SCAFFOLDER_API_KEY_FILE',
      'NATS_URL',
      'DATABASE_URL',
      '--version',
    ])
      expect(r.stdout).toContain(word);
    const tailHelp = bin('tail', '--help');
    expect(tailHelp.status).toBe(0);
    expect(tailHelp.stdout).toMatch(
      /usage: scaffolderctl tail \[options\][\s\S]*--count N[\s\S]*--new N[\s\S]*NATS_URL/,
    );
    expect(bin('--version').stdout).toMatch(/^scaffolderctl \d+\.\d+\.\d+\n$/);
    const typo = bin('stream-inf');
    expect([typo.status, typo.stderr.split('\n')[0]]).toEqual([
      2,
      'scaffolderctl: unknown command stream-inf; did you mean stream-info?',
    ]);
    const badOption = bin('status', '--stuck-minute', '5');
    expect(badOption.stderr).toMatch(/did you mean --stuck-minutes\?/);
  });

  it('says when a run id is not a run id', async () => {
    const said: string[] = [];
    const notAnId = await main(
      ['events', 'nope'],
      { NATS_URL: stack.nats.url, DATABASE_URL: stack.db.url },
      () => undefined,
      (t) => said.push(t),
    );
    expect(notAnId).toBe(2);
    expect(said.join('')).toBe(
      'scaffolderctl: "nope" is not a run id (run ids are UUIDs, e.g. 6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60)\n',
    );
  });
});
