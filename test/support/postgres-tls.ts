import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestTls, TestTls } from './certs';
import { tempDir } from './files';
import { freePort } from './services';

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
  return version ? join(root, version, 'bin') : '';
})();

/**
 * A PostgreSQL server of the test's own (initdb in a temporary folder, its own port) that accepts
 * only TLS connections, with a server certificate from a test CA for 127.0.0.1 and localhost.
 * Started as the postgres user (the server refuses to run as root).
 */
export class TlsPostgres {
  private proc?: ChildProcess;
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly tls: TestTls,
    /** A command line run as the postgres user. */
    private readonly asPostgres: (cmd: string, args: string[]) => [string, string[]],
  ) {}

  static async start(): Promise<TlsPostgres> {
    const dir = tempDir('pg-tls');
    const data = join(dir, 'data');
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    const asPostgres = (cmd: string, args: string[]) =>
      (process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]) as [
        string,
        string[],
      ];
    execFileSync(...asPostgres(join(PG_BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']), {
      stdio: 'ignore',
    });
    const tls = makeTestTls();
    for (const [from, to] of [
      ['server.pem', 'server.crt'],
      ['server-key.pem', 'server.key'],
    ]) {
      copyFileSync(join(tls.dir, from), join(data, to));
      chownSync(join(data, to), uid, gid);
      chmodSync(join(data, to), 0o600);
    }
    // TLS or nothing: a plain connection is rejected by the server.
    writeFileSync(
      join(data, 'pg_hba.conf'),
      'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 0.0.0.0/0 reject\n',
    );
    const pg = new TlsPostgres(dir, await freePort(), tls, asPostgres);
    const [cmd, args] = asPostgres(join(PG_BIN, 'postgres'), [
      '-D',
      data,
      '-p',
      String(pg.port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'ssl=on',
      '-c',
      'fsync=off',
    ]);
    pg.proc = spawn(cmd, args, { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      try {
        execFileSync(join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(pg.port)], { stdio: 'ignore' });
        return pg;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('the TLS PostgreSQL did not start');
  }

  /** A URL for host `host` (the certificate names 127.0.0.1 and localhost), without TLS settings. */
  url(host = 'localhost') {
    return `postgres://postgres@${host}:${this.port}/postgres`;
  }

  async stop() {
    if (!this.proc) return;
    const exited = new Promise((r) => this.proc!.once('exit', r));
    // runuser does not pass signals on: pg_ctl stops the server itself.
    execFileSync(
      ...this.asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']),
      { stdio: 'ignore' },
    );
    await exited;
    this.proc = undefined;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
