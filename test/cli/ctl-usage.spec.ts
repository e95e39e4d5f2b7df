import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { main } from '../../src/ctl';
import { childEnv } from '../support/files';

/** scaffolderctl's answers to a wrong command line: given before it connects to anything (no service runs here). */
async function ctl(...argv: string[]) {
  const lines: string[] = [];
  const errors: string[] = [];
  const code = await main(
    argv,
    // Nothing listens here: a command that tried to connect would fail with exit 1, not 2.
    {
      NATS_URL: 'nats://127.0.0.1:1',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      SCAFFOLDER_URL: 'http://127.0.0.1:1',
      SCAFFOLDER_API_KEY: 'unused-key-0123456789abcdef',
    },
    (l) => lines.push(l),
    (t) => errors.push(t),
  );
  return { code, out: lines.join('\n'), err: errors.join('') };
}

describe('scaffolderctl usage errors', () => {
  it.each([
    [['-V'], 'scaffolderctl: unknown option -V; did you mean --version?'],
    [['status', '--stuck-minutes', 'abc'], 'scaffolderctl: --stuck-minutes must be a whole number, not "abc"'],
    [['replay', '--from-seq', 'abc'], 'scaffolderctl: --from-seq must be a whole number from 1, not "abc"'],
    [['replay', '--from-seq', '0'], 'scaffolderctl: --from-seq must be a whole number from 1, not "0"'],
    [['tail', '--count', '-1'], 'scaffolderctl: --count needs a value (the next word starts with "-")'],
    [['list', '--limit', '2.5'], 'scaffolderctl: --limit must be a whole number from 1, not "2.5"'],
    [['create', '--wait', '--timeout', 'soon'], 'scaffolderctl: --timeout must be a whole number, not "soon"'],
    [
      ['stream-info', '--stuck-minutes', '5'],
      'scaffolderctl: unknown option --stuck-minutes here (it is an option of status)',
    ],
    [['statsu'], 'scaffolderctl: unknown command statsu; did you mean status?'],
    [
      ['get', 'nope'],
      'scaffolderctl: "nope" is not a run id (run ids are UUIDs, e.g. 6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60)',
    ],
    [['create'], 'scaffolderctl: create needs the request: -f FILE (JSON, as the API takes it; - reads stdin)'],
    [['create', '-f', '/nonexistent/request.json'], 'scaffolderctl: cannot read /nonexistent/request.json: ENOENT'],
    [['completion', 'tcsh'], 'scaffolderctl: completion needs a shell: bash, zsh, fish, not "tcsh"'],
  ])('%j', async (argv, message) => {
    const r = await ctl(...argv);
    expect([r.code, r.err.split('\n')[0]]).toEqual([2, message]);
  });

  it('answers a wrong command line in one line, not the whole usage (docs/cli.md: -V gets its likely meaning)', async () => {
    for (const [argv, line] of [
      [['-V'], 'scaffolderctl: unknown option -V; did you mean --version?'],
      [['statsu'], 'scaffolderctl: unknown command statsu; did you mean status?'],
      [['--frobnicate'], 'scaffolderctl: unknown option --frobnicate'],
    ]) {
      const r = await ctl(...argv);
      expect([r.code, r.out, r.err]).toEqual([2, '', `${line}\n`]);
    }
  });

  it('refuses plain HTTP to another machine (the key would cross the network in clear) unless told the network is private', async () => {
    const remote = {
      SCAFFOLDER_URL: 'http://scaffolder.corp.example:8080',
      SCAFFOLDER_API_KEY: 'unused-key-0123456789abcdef',
    };
    const lines: string[] = [];
    const errors: string[] = [];
    const code = await main(
      ['get', '6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60'],
      remote,
      (l) => lines.push(l),
      (t) => errors.push(t),
    );
    expect(code).toBe(2);
    expect(errors.join('')).toMatch(
      /^scaffolderctl: http:\/\/scaffolder\.corp\.example:8080 is plain HTTP to another machine: .*SCAFFOLDER_ALLOW_HTTP=1/,
    );
    // Told the network is private, it goes on (and fails to connect: nothing listens there, exit 1, not 2).
    const allowed = await main(
      ['get', '6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60'],
      { ...remote, SCAFFOLDER_URL: 'http://0.0.0.0:1', SCAFFOLDER_ALLOW_HTTP: '1' },
      () => undefined,
      () => undefined,
    );
    expect(allowed).toBe(1);
  });

  it('refuses a key on the command line without printing it', async () => {
    for (const argv of [
      ['get', '--api-key=SecretKey-0123456789abcdef'],
      ['list', '--api-key', 'SecretKey-0123456789abcdef'],
    ]) {
      const r = await ctl(...argv);
      expect([r.code, r.err]).toEqual([
        2,
        expect.stringMatching(/^scaffolderctl: an API key is never taken on the command line/),
      ]);
      expect(r.err + r.out).not.toContain('SecretKey');
    }
  });

  it('prints the same --version form as the other commands, and help for a command from its table', async () => {
    expect(await ctl('--version')).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^scaffolderctl \d+\.\d+\.\d+$/),
    });
    const help = await ctl('logs', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(
      /^usage: scaffolderctl logs RUN \[options\]\n[\s\S]*\n {2}-f, --follow +follow the log until the run ends\n/,
    );
  });

  it('says in one line that NATS cannot be reached, without the framework stack first (the built command)', () => {
    const r = spawnSync(process.execPath, [join(__dirname, '../../bin/scaffolderctl'), 'stream-info'], {
      env: childEnv({ NATS_URL: 'nats://127.0.0.1:1' }),
      encoding: 'utf8',
    });
    expect([r.status, r.stdout, r.stderr]).toEqual([
      1,
      '',
      'scaffolderctl: NATS at nats://127.0.0.1:1 is not reachable (connection refused)\n',
    ]);
  });

  it('reads a request from stdin (-f -) up to the 1 MiB the API takes (the built command)', () => {
    const bin = (input: string) =>
      spawnSync(process.execPath, [join(__dirname, '../../bin/scaffolderctl'), 'preview', '-f', '-'], {
        env: childEnv({ SCAFFOLDER_URL: 'http://127.0.0.1:1', SCAFFOLDER_API_KEY: 'unused-key-0123456789abcdef' }),
        input,
        encoding: 'utf8',
      });
    const big = bin(JSON.stringify({ cluster_name: 'x'.repeat(2 * 1024 * 1024) }));
    expect([big.status, big.stderr]).toEqual([
      2,
      'scaffolderctl: the request on stdin is larger than the API takes (1 MiB)\n',
    ]);
    const notJson = bin('cluster_name: x');
    expect([notJson.status, notJson.stderr]).toEqual([
      2,
      expect.stringMatching(/^scaffolderctl: the request on stdin is not JSON: /),
    ]);
    // Read and sent: then the service that is not there is the problem.
    const read = bin('{"cluster_name": "x"}');
    expect([read.status, read.stderr]).toEqual([
      1,
      expect.stringMatching(/^scaffolderctl: http:\/\/127\.0\.0\.1:1 could not be reached: /),
    ]);
  });
});
