import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitAccess, GitStepError, GitWorkspace } from '#libs/git';
import { makeTestTls } from '../support/certs';
import { CountingListener, eventually, processesWith, redirectTo } from '../support/listeners';

jest.setTimeout(60_000);

const identity = { name: 't', email: 't@x' };
const scratch = () => join(mkdtempSync(join(tmpdir(), 'gs-git-egress-')), 'wc');
const clone = (url: string, access: GitAccess, signal?: AbortSignal) =>
  GitWorkspace.clone(scratch(), { url, branch: 'main' }, identity, access, undefined, signal);

describe('git reaches only what the settings allow', () => {
  const tls = makeTestTls();
  const listeners: CountingListener[] = [];
  const start = async (l: Promise<CountingListener>) => {
    listeners.push(await l);
    return listeners[listeners.length - 1];
  };
  afterAll(() => Promise.all(listeners.map((l) => l.close())));

  it.each([
    ['in this process', false],
    ['in the helper process', true],
  ])('never follows a redirect of an allowed server to another host (%s)', async (_, helperProcess) => {
    const elsewhere = await start(CountingListener.http());
    const allowed = await start(
      CountingListener.http(
        redirectTo(`http://127.0.0.1:${elsewhere.port}/fleet.git/info/refs?service=git-upload-pack`),
      ),
    );
    const access = GitAccess.prepare({ credentialsHosts: [], allowedSchemes: ['http', 'https'], helperProcess });
    await expect(clone(`http://127.0.0.1:${allowed.port}/fleet.git`, access)).rejects.toThrow(GitStepError);
    expect(allowed.connections).toBeGreaterThan(0);
    expect(elsewhere.connections).toBe(0);
    // Without any settings too.
    await expect(clone(`http://127.0.0.1:${allowed.port}/fleet.git`, GitAccess.NONE)).rejects.toThrow(GitStepError);
    expect(elsewhere.connections).toBe(0);
  });

  it('never follows an HTTPS redirect either', async () => {
    const elsewhere = await start(CountingListener.https(tls, (_, res) => res.end()));
    const allowed = await start(
      CountingListener.https(
        tls,
        redirectTo(`https://127.0.0.1:${elsewhere.port}/fleet.git/info/refs?service=git-upload-pack`),
      ),
    );
    const access = GitAccess.prepare({ credentialsHosts: [], caFile: tls.caFile, allowedSchemes: ['https'] });
    await expect(clone(`https://127.0.0.1:${allowed.port}/fleet.git`, access)).rejects.toThrow(GitStepError);
    expect(allowed.connections).toBeGreaterThan(0);
    expect(elsewhere.connections).toBe(0);
  });

  it('uses no protocol outside GIT_ALLOWED_SCHEMES, whatever URL it is given', async () => {
    const http = await start(CountingListener.http());
    const ssh = await start(CountingListener.silent());
    const access = GitAccess.prepare({ credentialsHosts: [], allowedSchemes: ['https'] });
    await expect(clone(`http://127.0.0.1:${http.port}/fleet.git`, access)).rejects.toThrow(
      /transport 'http' not allowed/,
    );
    await expect(clone(`ssh://git@127.0.0.1:${ssh.port}/fleet.git`, access)).rejects.toThrow(
      /transport 'ssh' not allowed/,
    );
    expect(http.connections + ssh.connections).toBe(0);
  });

  it.each([
    ['ssh', 'in this process', false],
    ['https', 'in the helper process', true],
  ])(
    'an abort kills git and its %s transport (%s), and the server sees the connection closed',
    async (scheme, _, helperProcess) => {
      const silent = await start(CountingListener.silent());
      const marker = `abort-${scheme}-${Date.now()}`;
      const access = GitAccess.prepare({ credentialsHosts: [], allowedSchemes: ['https', 'ssh'], helperProcess });
      const abort = new AbortController();
      const started = Date.now();
      const cloning = clone(`${scheme}://git@127.0.0.1:${silent.port}/${marker}.git`, access, abort.signal);
      expect(await eventually(() => silent.connections > 0 && processesWith(marker).length > 0, 10_000)).toBe(true);
      abort.abort();
      await expect(cloning).rejects.toThrow(GitStepError);
      expect(Date.now() - started).toBeLessThan(15_000);
      await eventually(() => processesWith(marker).length === 0 && silent.openSockets === 0, 5_000);
      expect({ left: processesWith(marker), open: silent.openSockets }).toEqual({ left: [], open: 0 });
    },
  );
});
