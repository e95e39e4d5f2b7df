import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { childEnv, projectRoot, tempDir } from './files';
import { freePort } from './services';
import { API_KEY } from './service';

const MAIN = join(projectRoot(), 'dist/src/main.js');

/** The built service as a real process, to be killed with SIGKILL and started again. */
export class ServiceProcess {
  private proc?: ChildProcess;
  output = '';
  exits: Array<number | string | null> = [];
  constructor(
    readonly port: number,
    readonly env: Record<string, string>,
    /** Options for node itself (e.g. --cpu-prof), before the service's script. */
    readonly nodeArgs: string[] = [],
    /** A cgroup's process list to start in (benchmarks: the memory limit a pod has, which Node sizes its heaps from). */
    readonly cgroupProcs?: string,
  ) {}

  static async create(
    env: Record<string, string>,
    nodeArgs: string[] = [],
    cgroupProcs?: string,
  ): Promise<ServiceProcess> {
    return new ServiceProcess(
      await freePort(),
      {
        API_KEY,
        WORK_DIR: tempDir('proc-work'),
        GIT_ALLOWED_SCHEMES: 'https,ssh,file',
        REGISTRY_SERVER: 'registry.test.example.com',
        REGISTRY_USERNAME: 'proc-puller',
        REGISTRY_PASSWORD: 'ProcRegistryPassword-77aa88bb99',
        ACK_WAIT_SECONDS: '4',
        RUNNER_SERVICE_URL: 'http://gitops-scaffolder.kubeopera-system.svc:8080',
        // The namespace the tests' credentials and kubeconfig Secrets live in.
        SECRET_NAMESPACES: 'capi-clusters',
        LOG_LEVEL: 'info',
        ...env,
      },
      nodeArgs,
      cgroupProcs,
    );
  }

  get base() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(extraEnv: Record<string, string> = {}): Promise<void> {
    const command = [process.execPath, ...this.nodeArgs, MAIN];
    // In a cgroup: a shell joins it, then becomes node (exec), so node starts inside it and the pid is the service's.
    const [file, ...args] = this.cgroupProcs
      ? ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', this.cgroupProcs, ...command]
      : command;
    const proc = spawn(file, args, {
      env: childEnv({ HOST: '127.0.0.1', PORT: String(this.port), ...this.env, ...extraEnv }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    proc.stdout!.on('data', (d) => (this.output += d));
    proc.stderr!.on('data', (d) => (this.output += d));
    proc.on('exit', (code, signal) => {
      this.exits.push(signal ?? code);
      if (this.proc === proc) this.proc = undefined;
    });
    // A hang guard, not a speed check: a restart after SIGKILL took longer than 20 s with three suites on two cores.
    const until = Date.now() + 90_000;
    while (Date.now() < until) {
      if (!this.proc) throw new Error(`service exited at start:\n${this.output.slice(-2000)}`);
      const ok = await fetch(`${this.base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`service did not become healthy:\n${this.output.slice(-2000)}`);
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running() {
    return Boolean(this.proc);
  }

  /** Resolves when the process has exited (after a crash point fired or a kill). */
  async exited(ms = 60_000): Promise<void> {
    const until = Date.now() + ms;
    while (this.proc && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (this.proc) throw new Error('service did not exit');
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.proc?.kill(signal);
    // SIGTERM lets in-flight steps finish first (SHUTDOWN_GRACE_SECONDS), which takes longer on a busy machine.
    await this.exited(signal === 'SIGKILL' ? 10_000 : 150_000);
  }
}
