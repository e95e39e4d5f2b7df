/**
 * Programs started each in a process group of its own, so a program and everything it starts (git
 * and its ssh or git-remote-https, kubectl and the git kustomize runs) end together: on a deadline,
 * an abort, or when the process that started them goes away.
 */
import { spawn } from 'node:child_process';

export interface ProgramOptions {
  cwd?: string;
  /** The program's whole environment. */
  env?: NodeJS.ProcessEnv;
  /** Output beyond this many bytes (stdout or stderr) ends the program with an error. */
  maxBuffer?: number;
  /** Aborting kills the program's process group; the call then rejects with code ABORT_ERR. */
  signal?: AbortSignal;
}

export interface ProgramOutput {
  stdout: string;
  stderr: string;
}

/** A program that failed: its exit status (or ENOENT, ABORT_ERR, ENOBUFS) and what it wrote to stderr. */
export class ProgramError extends Error {
  constructor(
    message: string,
    readonly code: string | number,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'ProgramError';
  }
}

/** Where programs are started; the helper process and tests can hold their own. */
export interface ProgramRunner {
  run(file: string, args: string[], options?: ProgramOptions): Promise<ProgramOutput>;
  /** Kills the process group of every program still running (synchronous: usable while exiting). */
  killAll(): void;
}

const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export class ProcessGroups implements ProgramRunner {
  private readonly running = new Set<number>();

  /** How many programs are running now. */
  get size(): number {
    return this.running.size;
  }

  run(file: string, args: string[], options: ProgramOptions = {}): Promise<ProgramOutput> {
    return new Promise((resolve, reject) => {
      if (options.signal?.aborted) return reject(new ProgramError(`${file} was not started: aborted`, 'ABORT_ERR', ''));
      const child = spawn(file, args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: 0 };
      let failure: ProgramError | undefined;
      const end = (error: ProgramError) => {
        failure ??= error;
        if (child.pid !== undefined) killGroup(child.pid);
      };
      const onAbort = () => end(new ProgramError(`${file} was stopped: aborted`, 'ABORT_ERR', ''));
      const limit = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
      const collect = (into: Buffer[]) => (chunk: Buffer) => {
        into.push(chunk);
        out.bytes += chunk.length;
        if (out.bytes > limit) end(new ProgramError(`${file} wrote more than ${limit} bytes`, 'ENOBUFS', ''));
      };
      child.stdout.on('data', collect(out.stdout));
      child.stderr.on('data', collect(out.stderr));
      if (child.pid !== undefined) this.running.add(child.pid);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      child.on('error', (e: NodeJS.ErrnoException) => end(new ProgramError(e.message, e.code ?? 'ERROR', '')));
      child.on('close', (code, signal) => {
        if (child.pid !== undefined) this.running.delete(child.pid);
        // The program's own children may still hold the group: they go with it.
        if (child.pid !== undefined) killGroup(child.pid);
        options.signal?.removeEventListener('abort', onAbort);
        const stdout = Buffer.concat(out.stdout).toString('utf8');
        const stderr = Buffer.concat(out.stderr).toString('utf8');
        if (failure) return reject(Object.assign(failure, { stderr: failure.stderr || stderr }));
        if (code === 0) return resolve({ stdout, stderr });
        // Both streams: git push --porcelain reports a rejected ref ("[remote rejected]") on stdout, the hook's words on stderr.
        const message =
          [stderr.trim(), stdout.trim()].filter(Boolean).join('\n') || `${file} exited with ${code ?? signal}`;
        reject(new ProgramError(message, code ?? String(signal), stderr));
      });
    });
  }

  killAll(): void {
    for (const pid of this.running) killGroup(pid);
  }
}

let ofThisProcess: ProcessGroups | undefined;

/** This process's programs; their groups are killed when it exits (a helper process also on its parent's exit). */
export function processGroups(): ProcessGroups {
  if (!ofThisProcess) {
    const groups = new ProcessGroups();
    process.on('exit', () => groups.killAll());
    ofThisProcess = groups;
  }
  return ofThisProcess;
}
