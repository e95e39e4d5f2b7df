import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitAccess, GitAccessError, GitAccessSettings, GitStepError, GitWorkspace } from '#libs/git';
import { tempDir } from '../support/files';
import { credentialsDir, HttpsGitServer, SshGitServer } from '../support/git-servers';
import { gitLog } from '../support/services';

jest.setTimeout(60_000);

const identity = { name: 'test', email: 'test@example.com' };
const USER = 'fleet-bot';
const PASSWORD = 'GitHttpsPassword-7c7c7c7c';

/** Clone, commit a file, push: what one pass does with the remote. */
async function pushOnce(url: string, access: GitAccess) {
  const ws = await GitWorkspace.clone(join(tempDir('ws'), 'w'), { url, branch: 'main' }, identity, access);
  writeFileSync(join(ws.dir, 'pushed.txt'), 'x\n');
  await ws.commit(['pushed.txt'], 'scaffold: test', 'run-1', 'infra');
  await ws.push();
}

async function failure(run: Promise<unknown>): Promise<GitStepError> {
  const e = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(GitStepError);
  return e as GitStepError;
}

describe('git credentials: HTTPS (git http-backend, Basic auth, private CA)', () => {
  let server: HttpsGitServer;
  beforeAll(async () => {
    server = await HttpsGitServer.start({ username: USER, password: PASSWORD });
  });
  afterAll(() => server?.stop());
  const access = (settings: Partial<GitAccessSettings>) =>
    GitAccess.prepare({ credentialsHosts: [`127.0.0.1:${server.port}`], caFile: server.tls.caFile, ...settings });

  it('clones and pushes with the credentials folder and the CA, which wins over the inherited GIT_SSL_CAINFO', async () => {
    // This machine exports GIT_SSL_CAINFO/SSL_CERT_FILE (the system bundle, without the test CA).
    expect(process.env.GIT_SSL_CAINFO ?? process.env.SSL_CERT_FILE).toBeTruthy();
    const remote = server.repo();
    await pushOnce(
      remote.url,
      access({ credentialsDir: credentialsDir({ username: USER, password: `${PASSWORD}\n` }) }),
    );
    expect(gitLog(remote.dir)).toHaveLength(2);
    expect(server.attempts.some((a) => a.authorized && a.path.endsWith('/git-receive-pack'))).toBe(true);
  });

  it('a wrong password fails with git reason, not retried, without the password', async () => {
    const e = await failure(
      pushOnce(
        server.repo().url,
        access({ credentialsDir: credentialsDir({ username: USER, password: 'wrong-password-1' }) }),
      ),
    );
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/^authentication refused: .*fatal: Authentication failed for '<repo>\/?'/);
    expect(e.message).not.toContain('wrong-password-1');
  });

  it('never sends the credentials to a host they are not meant for', async () => {
    const before = server.attempts.length;
    const e = await failure(
      pushOnce(
        server.repo().url,
        access({
          credentialsHosts: ['git.example.org'],
          credentialsDir: credentialsDir({ username: USER, password: PASSWORD }),
        }),
      ),
    );
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/could not read Username/);
    expect(server.attempts.slice(before).filter((a) => a.authorized)).toEqual([]);
  });

  it('without the private CA the server is not trusted: a TLS failure, not retried', async () => {
    const e = await failure(
      pushOnce(
        server.repo().url,
        access({ caFile: undefined, credentialsDir: credentialsDir({ username: USER, password: PASSWORD }) }),
      ),
    );
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/^TLS verification failed: .*server certificate verification failed/);
  });

  it('refuses settings it cannot use at start, naming the variable', () => {
    expect(() =>
      GitAccess.prepare({
        credentialsHosts: [],
        credentialsDir: credentialsDir({ username: USER, password: PASSWORD }),
      }),
    ).toThrow(/^GIT_CREDENTIALS_HOSTS: name the HTTPS git hosts/);
    expect(() =>
      GitAccess.prepare({ credentialsHosts: ['a.example'], credentialsDir: credentialsDir({ username: USER }) }),
    ).toThrow(GitAccessError);
    expect(() =>
      GitAccess.prepare({
        credentialsHosts: ['a b'],
        credentialsDir: credentialsDir({ username: USER, password: PASSWORD }),
      }),
    ).toThrow(/GIT_CREDENTIALS_HOSTS: "a b" is not a host/);
    expect(() => GitAccess.prepare({ credentialsHosts: [], caFile: join(tempDir('ca'), 'missing.pem') })).toThrow(
      /^GIT_CA_FILE: cannot read .*missing\.pem \(ENOENT\)/,
    );
    expect(() => GitAccess.prepare({ credentialsHosts: [], credentialsDir: '/nonexistent/creds' })).toThrow(
      /^GIT_CREDENTIALS_DIR: \/nonexistent\/creds is not a folder/,
    );
  });
});

describe('git credentials: SSH (OpenSSH sshd on its own port)', () => {
  let server: SshGitServer;
  beforeAll(async () => {
    server = await SshGitServer.start();
  });
  afterAll(() => server?.stop());
  const access = (files: Record<string, string>) =>
    GitAccess.prepare({ credentialsHosts: [], credentialsDir: credentialsDir(files) });

  it('clones and pushes with the key (mounted readable by others, as Secrets with fsGroup are) and known_hosts', async () => {
    const remote = server.repo();
    await pushOnce(
      remote.url,
      access({ 'ssh-privatekey': server.clientKey, known_hosts: `${server.knownHostsLine}\n` }),
    );
    expect(gitLog(remote.dir)).toHaveLength(2);
  });

  it('a key the server does not accept fails with ssh reason, not retried', async () => {
    const other = await SshGitServer.start();
    try {
      const e = await failure(
        pushOnce(
          server.repo().url,
          access({ 'ssh-privatekey': other.clientKey, known_hosts: `${server.knownHostsLine}\n` }),
        ),
      );
      expect(e.retryable).toBe(false);
      expect(e.message).toMatch(
        /^authentication refused: .*Permission denied \(publickey\)\. fatal: Could not read from remote repository\.$/,
      );
    } finally {
      await other.stop();
    }
  });

  it('an unknown host key fails before anything is sent, not retried', async () => {
    const elsewhere = await SshGitServer.start();
    try {
      for (const knownHosts of [
        undefined,
        `${elsewhere.knownHostsLine.replace(String(elsewhere.port), String(server.port))}\n`,
      ]) {
        const files: Record<string, string> = {
          'ssh-privatekey': server.clientKey,
          ...(knownHosts ? { known_hosts: knownHosts } : {}),
        };
        const e = await failure(pushOnce(server.repo().url, access(files)));
        expect(e.retryable).toBe(false);
        expect(e.message).toMatch(/Host key verification failed\. fatal: Could not read from remote repository\.$/);
      }
    } finally {
      await elsewhere.stop();
    }
  });

  it('an unresolvable host: ssh says so before git does', async () => {
    const e = await failure(
      pushOnce('ssh://git@nonexistent.invalid/fleet.git', access({ 'ssh-privatekey': server.clientKey })),
    );
    expect(e.message).toMatch(
      /ssh: Could not resolve hostname nonexistent\.invalid.* fatal: Could not read from remote repository\.$/,
    );
  });
});
