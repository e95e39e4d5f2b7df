import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_ID_LABEL, runnerSecretNameFor, RUNNER_TOKEN_KEY } from '#libs/kube';
import type { FakeKube } from './fake-kube';
import { childEnv, projectRoot, tempDir } from './files';
import { waitFor } from './service';

const RUNNER = join(projectRoot(), 'bin/scaffold-runner');

/**
 * The run's credential as its Job mounts it: the token in the Secret the service created beside the Job,
 * written to a file, with the service's URL (what the Job spec gives the runner).
 */
export async function runnerAccess(
  management: FakeKube,
  runId: string,
  serviceUrl: string,
  namespace = 'kubeopera-provisioning',
): Promise<{ SCAFFOLDER_URL: string; RUNNER_TOKEN_FILE: string }> {
  const token = await waitFor('the runner credential Secret', async () =>
    management.secretValue(namespace, runnerSecretNameFor(runId), RUNNER_TOKEN_KEY),
  );
  const file = join(tempDir('runner-credential'), RUNNER_TOKEN_KEY);
  writeFileSync(file, token, { mode: 0o400 });
  return { SCAFFOLDER_URL: serviceUrl, RUNNER_TOKEN_FILE: file };
}

/**
 * Runs a scaffold Job's container command as a real process, with the environment the Job would give it;
 * `niceness` (benchmarks) gives it a lower CPU priority, as a Job on another node would not take the service's cores.
 */
export function runJob(
  runId: string,
  env: Record<string, string>,
  niceness = 0,
  /** Where the running process is kept until it exits (to kill it). */
  running?: Set<ChildProcess>,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, RUNNER, '--run', runId];
  const [file, ...args] = niceness ? ['nice', '-n', String(niceness), ...command] : command;
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    running?.add(child);
    child.on('exit', (code) => {
      running?.delete(child);
      resolve({ code, output });
    });
  });
}

/**
 * The cluster's nodes, for benchmarks of EXECUTOR=kubernetes: runs each Job the service creates in the fake API
 * server as a runner process (at most `parallel` at once, the room a cluster has; the rest wait as Pending Jobs do)
 * and marks it Complete or Failed when the runner exits, as the Job controller would.
 */
export class LocalKubelet {
  private readonly started = new Set<string>();
  /** Jobs (namespace/name) waiting for room, in the order the service created them. */
  private readonly pending: string[] = [];
  private running = 0;
  private timer?: NodeJS.Timeout;
  private readonly children = new Set<ChildProcess>();
  /** Runners that exited with an error: the run and the end of their output. */
  readonly failures: Array<{ runId: string; output: string }> = [];

  constructor(
    private readonly management: FakeKube,
    private readonly serviceUrl: string,
    /** The settings the Job's ConfigMap and Secrets would give the runner. */
    private readonly env: Record<string, string>,
    private readonly parallel: number,
    private readonly niceness = 10,
  ) {}

  start(): this {
    this.timer = setInterval(() => this.schedule(), 100);
    return this;
  }

  /** Stops starting runners and kills those still running (a benchmark that ends early leaves none behind). */
  stop(): void {
    clearInterval(this.timer);
    for (const child of this.children) child.kill('SIGKILL');
  }

  private schedule(): void {
    for (const key of this.management.jobs.keys()) {
      if (this.started.has(key)) continue;
      this.started.add(key);
      this.pending.push(key);
    }
    while (this.running < this.parallel && this.pending.length > 0) void this.run(this.pending.shift()!);
  }

  private async run(jobKey: string): Promise<void> {
    const runId: string = this.management.jobs.get(jobKey).metadata.labels[RUN_ID_LABEL];
    this.running++;
    try {
      const access = await runnerAccess(this.management, runId, this.serviceUrl);
      const { code, output } = await runJob(
        runId,
        { ...this.env, ...access, WORK_DIR: tempDir('kubelet-runner') },
        this.niceness,
        this.children,
      );
      const job = this.management.jobs.get(jobKey);
      if (job)
        job.status =
          code === 0
            ? { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] }
            : { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] };
      if (code !== 0) this.failures.push({ runId, output: output.slice(-2000) });
    } catch (e) {
      // No credential Secret (the launcher failed first): a failure of this run, not of the benchmark.
      this.failures.push({ runId, output: String(e) });
    } finally {
      this.running--;
    }
  }
}
