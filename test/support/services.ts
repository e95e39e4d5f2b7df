import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { tempDir, writeTree } from './files';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as any).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForPort(port: number, ms = 10_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = require('node:net').connect(port, '127.0.0.1');
      s.once('connect', () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} did not open`);
}

const NATS_BIN =
  ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) =>
    require('node:fs').existsSync(p),
  ) ?? 'nats-server';

/** A test-owned nats-server with JetStream on its own port and store folder. */
export class TestNats {
  private proc?: ChildProcess;
  readonly storeDir = tempDir('nats-store');
  /** What the server printed (with -c configurations: permission violations, TLS errors). */
  output = '';
  constructor(
    readonly port: number,
    /** A configuration file and its environment instead of the plain command line. */
    private readonly config?: { file: string; env: Record<string, string>; scheme: 'nats' | 'tls' },
  ) {}

  static async start(): Promise<TestNats> {
    const n = new TestNats(await freePort());
    await n.startProcess();
    return n;
  }

  /** nats-server -c FILE with FILE's $VARIABLES from env (NATS_LISTEN and NATS_STORE_DIR are filled in). */
  static async startWithConfig(
    file: string,
    env: Record<string, string>,
    scheme: 'nats' | 'tls' = 'nats',
    port?: number,
  ): Promise<TestNats> {
    const n = new TestNats(port ?? (await freePort()), { file, env, scheme });
    await n.startProcess();
    return n;
  }

  get url() {
    return `${this.config?.scheme ?? 'nats'}://127.0.0.1:${this.port}`;
  }

  async startProcess() {
    // Run in the store folder: nats-server 2.9 wrote a consumer's meta.inf and meta.sum into its working
    // directory (the checkout) once, during the cluster test's node restarts.
    const cwd = this.storeDir;
    const proc = this.config
      ? spawn(NATS_BIN, ['-c', this.config.file], {
          cwd,
          env: { ...this.config.env, NATS_LISTEN: `127.0.0.1:${this.port}`, NATS_STORE_DIR: this.storeDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(NATS_BIN, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], {
          cwd,
          stdio: 'ignore',
        });
    proc.stdout?.on('data', (d) => (this.output += d));
    proc.stderr?.on('data', (d) => (this.output += d));
    this.proc = proc;
    await waitForPort(this.port);
  }

  /** SIGTERM (a clean shutdown) or SIGKILL (a crash). */
  async stop(signal: NodeJS.Signals = 'SIGTERM') {
    if (!this.proc) return;
    const exited = new Promise((r) => this.proc!.once('exit', r));
    this.proc.kill(signal);
    await exited;
    this.proc = undefined;
  }

  async destroy() {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

/**
 * A 3-node JetStream cluster on loopback: three nats-server processes, each with its own port,
 * store and cluster route port, routed to the others. `url` lists all three, as NATS_URL would.
 */
export class TestNatsCluster {
  private constructor(readonly nodes: TestNats[]) {}

  static async start(size = 3): Promise<TestNatsCluster> {
    const clientPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const dir = tempDir('nats-cluster');
    const nodes = await Promise.all(
      clientPorts.map((port, i) => {
        const file = `${dir}/n${i + 1}.conf`;
        const routes = routePorts.filter((_, j) => j !== i).map((p) => `"nats-route://127.0.0.1:${p}"`);
        require('node:fs').writeFileSync(
          file,
          `server_name: n${i + 1}\nlisten: $NATS_LISTEN\njetstream { store_dir: $NATS_STORE_DIR }\ncluster { name: scaffolder-test, listen: "127.0.0.1:${routePorts[i]}", routes: [${routes.join(', ')}] }\n`,
        );
        return TestNats.startWithConfig(file, {}, 'nats', port);
      }),
    );
    return new TestNatsCluster(nodes);
  }

  get url() {
    return this.nodes.map((n) => n.url).join(',');
  }

  /** The node whose server_name is `name` (as JetStream reports stream leaders). */
  node(name: string): TestNats {
    return this.nodes[Number(name.replace(/^n/, '')) - 1];
  }

  /** The node a client reached through `127.0.0.1:<port>`. */
  nodeAt(server: string): TestNats {
    return this.nodes.find((n) => server.endsWith(`:${n.port}`))!;
  }

  async destroy() {
    await Promise.all(this.nodes.map((n) => n.destroy()));
  }
}

const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database on the machine's PostgreSQL, dropped at the end. */
export class TestDatabase {
  constructor(readonly name: string) {}

  static async create(): Promise<TestDatabase> {
    const name = `gs_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const c = new Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    return new TestDatabase(name);
  }

  get url() {
    return ADMIN_URL.replace(/\/[^/]*$/, `/${this.name}`);
  }

  /** PostgreSQL refusing this database (every open connection cut) or taking connections again: an outage of it alone. */
  async refuseConnections(refuse: boolean) {
    const c = new Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`ALTER DATABASE ${this.name} ALLOW_CONNECTIONS ${!refuse}`);
    if (refuse) await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [this.name]);
    await c.end();
  }

  async drop() {
    const c = new Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`);
    await c.end();
  }
}

/** Every read-model row, in id order: for comparing the live projection with a rebuild. */
export async function readModelRows(url: string): Promise<any[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('SELECT * FROM scaffold_runs ORDER BY id')).rows;
  } finally {
    await c.end();
  }
}

/** A local bare repository with one commit on main, as a platform repository would have. */
export function bareRepo(): { url: string; dir: string } {
  const dir = tempDir('remote') + '/platform.git';
  execFileSync('git', ['init', '--bare', '--initial-branch=main', dir]);
  const seed = tempDir('seed');
  execFileSync('git', ['clone', dir, seed], { stdio: 'ignore' });
  require('node:fs').writeFileSync(`${seed}/README.md`, '# platform fleet\n');
  const g = (...a: string[]) =>
    execFileSync('git', ['-C', seed, '-c', 'user.name=seed', '-c', 'user.email=seed@x', ...a], { stdio: 'ignore' });
  g('add', '.');
  g('commit', '-m', 'seed');
  g('push', 'origin', 'HEAD:main');
  return { url: `file://${dir}`, dir };
}

/** Another writer of the fleet repository: clones it, writes `files`, commits with `message` and pushes to main. */
export function pushAsAnotherWriter(gitDir: string, files: Record<string, string>, message: string): string {
  const work = tempDir('other-writer');
  execFileSync('git', ['clone', '-q', gitDir, work]);
  writeTree(work, files);
  const g = (...a: string[]) =>
    execFileSync('git', ['-C', work, '-c', 'user.name=other', '-c', 'user.email=other@x', ...a], { encoding: 'utf8' });
  g('add', '--all');
  g('commit', '-q', '-m', message);
  g('push', '-q', 'origin', 'HEAD:main');
  return g('rev-parse', 'HEAD').trim();
}

/** Commits on the branch that carry this run's trailer, by pass. */
export function runCommits(gitDir: string, runId: string): string[] {
  const out = execFileSync(
    'git',
    [
      '--git-dir',
      gitDir,
      'log',
      '--format=%(trailers:key=Scaffold-Pass,valueonly)',
      '--fixed-strings',
      `--grep=Scaffold-Run: ${runId}`,
      'main',
    ],
    { encoding: 'utf8' },
  );
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

export function gitLog(dir: string, branch = 'main'): string[] {
  return execFileSync('git', ['--git-dir', dir, 'log', '--format=%H %s', branch], { encoding: 'utf8' })
    .trim()
    .split('\n');
}
