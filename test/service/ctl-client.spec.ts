import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { childEnv, tempDir } from '../support/files';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { API_KEY, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo } from '../support/services';

jest.setTimeout(60_000);

const BIN = join(__dirname, '../../bin/scaffolderctl');
const OTHER_KEY = 'other-tenant-key-0123456789ab';

/** The built scaffolderctl as a user runs it (asynchronously: the service answers in this process). */
function scaffolderctl(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A key file as the client demands it: the owner's alone. */
function keyFile(key: string, mode = 0o600): string {
  const file = join(tempDir('ctl-client-key'), 'api.key');
  writeFileSync(file, `${key}\n`, { mode });
  return file;
}

describe('scaffolderctl as a client of the REST API (the built command against the real service)', () => {
  const stack = useServiceStack(() => ({ API_KEYS: `other:operator:${OTHER_KEY}` }));
  const cert = makeRsaCert();
  const remote = bareRepo();
  const dir = tempDir('ctl-client');
  const request = (name: string, body: object) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(body));
    return file;
  };
  const adminKey = keyFile(API_KEY);
  const ctl = (args: string[], key = adminKey) =>
    scaffolderctl(args, { SCAFFOLDER_URL: stack.svc.base, SCAFFOLDER_API_KEY_FILE: key });
  let succeeded: string;

  it('create --wait prints each event as the run advances and exits 0 when it succeeded', async () => {
    const r = await ctl(['create', '-f', request('ok', createBody('cli-ok', remote.url, cert.certPem)), '--wait']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trim().split('\n');
    succeeded = /^run (\S+) queued/.exec(lines[0])![1];
    const types = lines.slice(1, -1).map((l) => l.split(/\s+/)[1]);
    expect(types.filter((t) => t !== 'StepProgress')).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(lines.find((l) => l.includes('InfraPushed'))).toMatch(
      /^\d\d:\d\d:\d\d {2}InfraPushed +infra pass pushed [0-9a-f]{12} \(\d+ files\)$/,
    );
    expect(lines.at(-1)).toBe(`run ${succeeded} succeeded`);
  });

  it('exits 3 when the run failed, with the reason among the progress lines', async () => {
    const body = {
      ...createBody('cli-bad', remote.url, cert.certPem),
      repo: { url: remote.url, branch: 'no-such-branch' },
    };
    const r = await ctl(['create', '-f', request('bad', body), '--wait']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/ScaffoldFailed +failed at infra-pass: .*the branch does not exist on the remote/);
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/^run \S+ failed$/);
  });

  it('gets, lists and prints the log of a run; --json gives the answers as the API gives them', async () => {
    const get = await ctl(['get', succeeded]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(
      new RegExp(`^id: +${succeeded}\\nstatus: +succeeded\\n[\\s\\S]*infra commit: +[0-9a-f]{40}`),
    );
    expect(JSON.parse((await ctl(['get', succeeded, '--json'])).stdout)).toMatchObject({
      id: succeeded,
      status: 'succeeded',
    });
    const list = await ctl(['list', '--status', 'succeeded']);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID +STATUS +STEP +CLUSTER +AGE$/);
    expect(list.stdout).toMatch(new RegExp(`^${succeeded} +succeeded +\\S+ +cli-ok +\\d+s$`, 'm'));
    const failed = JSON.parse((await ctl(['list', '--status', 'failed', '--limit', '5', '--json'])).stdout);
    expect(failed.items.map((i: any) => i.cluster_name)).toEqual(['cli-bad']);
    const logs = await ctl(['logs', succeeded]);
    expect(logs.code).toBe(0);
    expect(logs.stdout.trim().split('\n').at(-1)).toMatch(/INFO \[run\] run succeeded: /);
    const bad = await ctl(['list', '--status', 'done']);
    expect([bad.code, bad.stderr]).toEqual([
      1,
      expect.stringMatching(/^scaffolderctl: list refused: 400 \S+: status: must be one of/),
    ]);
  });

  it('cancels a run; logs -f follows it to its end and exits 4 for a cancelled run', async () => {
    const created = await ctl([
      'create',
      '-f',
      request('cancel', createBody('cli-cancel', remote.url, cert.certPem)),
      '--json',
    ]);
    const id = JSON.parse(created.stdout).id;
    const cancel = await ctl(['cancel', id]);
    expect([cancel.code, cancel.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^cancel of ${id} accepted: `))]);
    const follow = await ctl(['logs', id, '-f']);
    expect(follow.code).toBe(4);
    expect(follow.stdout).toMatch(/\[run\] run cancelled/);
    const again = await ctl(['cancel', id]);
    expect([again.code, again.stderr]).toEqual([
      1,
      expect.stringMatching(/^scaffolderctl: cancel refused: 409 \S+: .+\n$/),
    ]);
  });

  it('previews a request: the changes and the credential plan in words, or the answer as JSON', async () => {
    const file = request('preview', createBody('cli-preview', remote.url, cert.certPem));
    const r = await ctl(['preview', '-f', file]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^full pass\n/);
    expect(r.stdout).toMatch(/dry run: \d+ files would change \(nothing was written\)/);
    expect(r.stdout).toMatch(/^ {2}files that would be written: \d+, removed: \d+$/m);
    expect(r.stdout).not.toContain('files written');
    expect(r.stdout).toContain('clusters/cli-preview/');
    const json = JSON.parse((await ctl(['preview', '-f', file, '--json'])).stdout);
    expect(json).toMatchObject({ pass: 'full', summary: { cluster_name: 'cli-preview' } });
    expect((await untilTerminal(stack.svc.base, succeeded)).status).toBe('succeeded');
  });

  it("shows another tenant's key nothing of these runs (404 as the API answers, never 403)", async () => {
    const other = keyFile(OTHER_KEY);
    for (const args of [
      ['get', succeeded],
      ['logs', succeeded],
      ['cancel', succeeded],
    ]) {
      const r = await ctl(args, other);
      expect([args[0], r.code, r.stdout, r.stderr]).toEqual([
        args[0],
        1,
        '',
        expect.stringMatching(new RegExp(`^scaffolderctl: ${args[0]} refused: 404 `)),
      ]);
      expect(r.stderr).not.toContain('cli-ok');
    }
    expect((await ctl(['list'], other)).stdout).toBe('no runs\n');
    expect((await ctl(['environments'], other)).stdout).toBe('no environments\n');
  });

  it("lists the environments the key's runs made and shows one, in words or as the API's answer", async () => {
    const list = await ctl(['environments', '--cluster-name', 'cli-ok']);
    expect([list.code, list.stderr]).toEqual([0, '']);
    const [head, row, ...rest] = list.stdout.trim().split('\n');
    expect([head, rest]).toEqual([expect.stringMatching(/^ID +CLUSTER +STATUS +REFERENCE +BEHIND +REPOSITORY$/), []]);
    const [id, cluster, status] = row.split(/\s+/);
    expect([id, cluster, status]).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), 'cli-ok', 'live']);
    const one = await ctl(['environments', id]);
    expect(one.stdout).toMatch(new RegExp(`^id: +${id}\nstatus: +live\ncluster: +cli-ok `));
    expect(JSON.parse((await ctl(['environments', id, '--json'])).stdout)).toMatchObject({
      id,
      cluster_name: 'cli-ok',
    });
    const bad = await ctl(['environments', 'not-an-id']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('is not an environment id')]);
    const theirs = await ctl(['environments', id], keyFile(OTHER_KEY));
    expect([theirs.code, theirs.stderr]).toEqual([
      1,
      expect.stringMatching(/^scaffolderctl: environment refused: 404 /),
    ]);
  });

  it('never takes a key on the command line, refuses a key file others may read, follows no redirect, and never prints the key', async () => {
    const onArgv = await ctl(['get', succeeded, `--api-key=${API_KEY}`]);
    expect([onArgv.code, onArgv.stderr]).toEqual([
      2,
      expect.stringMatching(/an API key is never taken on the command line/),
    ]);
    const readable = await ctl(['get', succeeded], keyFile(API_KEY, 0o644));
    expect([readable.code, readable.stderr]).toEqual([
      2,
      expect.stringMatching(/readable or writable by group or others: chmod 600 it/),
    ]);
    const redirector: Server = createServer((_req, res) =>
      res.writeHead(307, { location: `${stack.svc.base}/api/v1/scaffolds/${succeeded}` }).end(),
    );
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const r = await scaffolderctl(['get', succeeded], {
        SCAFFOLDER_URL: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`,
        SCAFFOLDER_API_KEY_FILE: adminKey,
      });
      expect([r.code, r.stdout, r.stderr.split('\n').length]).toEqual([1, '', 2]);
      expect(r.stderr).toMatch(/could not be reached: .*redirect/);
    } finally {
      redirector.close();
    }
    const wrong = await ctl(['get', succeeded], keyFile('wrong-key-0123456789abcdef'));
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringMatching(/^scaffolderctl: get refused: 401 /)]);
    for (const r of [onArgv, readable, wrong]) expect(r.stdout + r.stderr).not.toContain(API_KEY);
  });
});
