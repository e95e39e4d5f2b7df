/**
 * Real git servers on loopback for the tests: `git http-backend` behind a Node HTTPS server with
 * Basic auth and a test CA, and OpenSSH's sshd on a port of its own with its own host key.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, Server } from 'node:https';
import { createServer as createNetServer, connect } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { makeTestTls, TestTls } from './certs';
import { tempDir } from './files';

/** A bare repository with one seed commit on main, under `root`. */
function seededBareRepo(root: string, name: string): string {
  const dir = join(root, `${name}.git`);
  execFileSync('git', ['init', '--bare', '--initial-branch=main', dir], { stdio: 'ignore' });
  execFileSync('git', ['--git-dir', dir, 'config', 'http.receivepack', 'true']);
  const seed = tempDir('seed');
  execFileSync('git', ['clone', dir, seed], { stdio: 'ignore' });
  writeFileSync(join(seed, 'README.md'), '# platform fleet\n');
  const g = (...a: string[]) =>
    execFileSync('git', ['-C', seed, '-c', 'user.name=seed', '-c', 'user.email=seed@x', ...a], { stdio: 'ignore' });
  g('add', '.');
  g('commit', '-m', 'seed');
  g('push', 'origin', 'HEAD:main');
  return dir;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** HTTPS in front of git http-backend: Basic auth for every request, pushes allowed to the authenticated user. */
export class HttpsGitServer {
  readonly root = tempDir('https-git');
  /** Authorization header values seen, to show what the client sent (tests check no credential leaks elsewhere). */
  readonly attempts: Array<{ method: string; path: string; authorized: boolean }> = [];
  private server!: Server;
  port = 0;

  private constructor(
    readonly tls: TestTls,
    private readonly username: string,
    private readonly password: string,
  ) {}

  static async start(credentials: { username: string; password: string }): Promise<HttpsGitServer> {
    const s = new HttpsGitServer(makeTestTls(), credentials.username, credentials.password);
    s.server = createHttpsServer({ key: s.tls.keyPem, cert: s.tls.certPem }, (req, res) => s.handle(req, res));
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.port = (s.server.address() as { port: number }).port;
    return s;
  }

  /** A new seeded repository and its HTTPS URL (no credentials in it). */
  repo(name = `fleet-${Math.random().toString(36).slice(2, 8)}`): { url: string; dir: string } {
    const dir = seededBareRepo(this.root, name);
    return { url: `https://127.0.0.1:${this.port}/${name}.git`, dir };
  }

  private authorized(header: string | undefined): boolean {
    if (!header?.startsWith('Basic ')) return false;
    const [user, ...rest] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
    return user === this.username && rest.join(':') === this.password;
  }

  private handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
    const url = new URL(req.url ?? '/', 'https://x');
    const authorized = this.authorized(req.headers.authorization);
    this.attempts.push({ method: req.method ?? '', path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
      return res.end('authentication required\n');
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_USER: this.username,
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  }

  async stop() {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * sshd on its own port and host key; logs in as the current user with a key the test made. With
 * `defaultPort`, it listens on port 22 of a loopback address of its own (127.x.y.z), which scp-like
 * URLs (`user@host:path`, no port) reach.
 */
export class SshGitServer {
  readonly dir = tempDir('ssh-git');
  private proc!: ChildProcess;
  port = 0;
  host = '127.0.0.1';
  /** The client's private key (OpenSSH format) and the server's known_hosts line. */
  clientKey = '';
  knownHostsLine = '';

  static async start(opts: { defaultPort?: boolean } = {}): Promise<SshGitServer> {
    const s = new SshGitServer();
    if (opts.defaultPort) s.host = randomLoopbackAddress();
    await s.boot(opts.defaultPort ? 22 : await freePort());
    return s;
  }

  /** How ssh names this server in known_hosts and git URLs: `host`, or `[host]:port` off port 22. */
  private get hostAndPort(): string {
    return this.port === 22 ? this.host : `[${this.host}]:${this.port}`;
  }

  private async boot(port: number) {
    const keygen = (file: string, comment: string) =>
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', join(this.dir, file)]);
    keygen('host_ed25519', 'test-git-host');
    keygen('client_ed25519', 'gitops-scaffolder-test');
    writeFileSync(join(this.dir, 'authorized_keys'), readFileSync(join(this.dir, 'client_ed25519.pub')));
    chmodSync(join(this.dir, 'authorized_keys'), 0o600);
    this.clientKey = readFileSync(join(this.dir, 'client_ed25519'), 'utf8');
    this.port = port;
    const hostPub = readFileSync(join(this.dir, 'host_ed25519.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
    this.knownHostsLine = `${this.hostAndPort} ${hostPub}`;
    const config = join(this.dir, 'sshd_config');
    writeFileSync(
      config,
      [
        `Port ${this.port}`,
        `ListenAddress ${this.host}`,
        `HostKey ${join(this.dir, 'host_ed25519')}`,
        `PidFile ${join(this.dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${join(this.dir, 'authorized_keys')}`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        'UsePAM no',
        'LogLevel ERROR',
        '',
      ].join('\n'),
    );
    mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege-separation folder
    this.proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    this.proc.stderr!.on('data', (d) => (stderr += d));
    for (let i = 0; ; i++) {
      if (await canConnect(this.host, this.port)) return;
      if (this.proc.exitCode !== null || i > 100) throw new Error(`sshd did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A new seeded repository and its ssh:// URL. */
  repo(name = `fleet-${Math.random().toString(36).slice(2, 8)}`): { url: string; dir: string } {
    const dir = seededBareRepo(this.dir, name);
    return { url: `ssh://${userInfo().username}@${this.host}:${this.port}${dir}`, dir };
  }

  async stop() {
    if (this.proc.exitCode !== null) return;
    this.proc.kill('SIGTERM');
    await new Promise((r) => this.proc.once('exit', r));
  }
}

/** An address of 127/8 other than 127.0.0.1 (Linux answers on all of them), so two suites rarely share one. */
function randomLoopbackAddress(): string {
  const byte = () => 1 + Math.floor(Math.random() * 254);
  return `127.${byte()}.${byte()}.${byte()}`;
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** A folder laid out like mounted basic-auth / ssh-auth Secrets. */
export function credentialsDir(files: Record<string, string>): string {
  const dir = tempDir('git-credentials');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content, { mode: 0o644 });
  return dir;
}
