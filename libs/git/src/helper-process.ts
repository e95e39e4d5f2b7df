import { ChildProcess, fork } from 'node:child_process';
import { compiledFile } from '#libs/runtime';
import type { GitCall } from './git-command';

/** How a program runs: its folder, an output limit, and its whole environment (default: the helper's own). */
export type ExecOptions = { cwd?: string; maxBuffer?: number; env?: Record<string, string> };

/** What the helper runs: a git command, or a program with its arguments (each in a process group of its own). */
export type HelperRequest =
  { kind: 'git'; call: GitCall } | { kind: 'exec'; file: string; args: string[]; options: ExecOptions };

/** What the helper is sent: a request, or the cancellation of one (its process group is killed). */
export type HelperMessage = { id: number; request: HelperRequest } | { cancel: number };

export type HelperReply =
  | { id: number; ok: true; stdout: string; stderr: string }
  | { id: number; ok: false; message: string; code?: string | number; stderr?: string };

/** A failure as the helper reported it, shaped like execFile's (code, stderr) so callers read it the same way. */
export class HelperError extends Error {
  constructor(
    message: string,
    readonly code?: string | number,
    readonly stderr?: string,
  ) {
    super(message);
  }
}

/**
 * Programs (git, kubectl) started by a small helper process instead of this one. Starting a program
 * from a large process stalls it: fork copies the page tables of the whole address space, and a pass
 * starts about twenty programs; the thread that forks waits, and the others fault on the copy-on-write
 * pages after it (docs/benchmarks.md). From the helper (tens of MB) a start costs about 1 ms. The helper
 * starts with the first request, is started again after a crash (requests in flight fail) and exits with
 * its parent (its IPC channel closes), killing the process groups of the programs it started, so none
 * outlives the service.
 */
export class HelperProcess {
  private child?: ChildProcess;
  private readonly pending = new Map<
    number,
    { resolve: (out: { stdout: string; stderr: string }) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;

  /** The helper's process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Runs a request in the helper; aborting `signal` kills what it started, and the call rejects (code ABORT_ERR). */
  call(request: HelperRequest, signal?: AbortSignal): Promise<{ stdout: string; stderr: string }> {
    if (signal?.aborted) return Promise.reject(new HelperError('not started: aborted', 'ABORT_ERR'));
    const child = this.child ?? this.start();
    const id = this.nextId++;
    const cancel = () => child.send({ cancel: id } satisfies HelperMessage, () => undefined);
    return new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A request waiting for its answer keeps this process alive; an idle helper does not.
      child.channel?.ref();
      signal?.addEventListener('abort', cancel, { once: true });
      child.send(
        { id, request } satisfies HelperMessage,
        (e) =>
          e && this.settle({ id, ok: false, message: `the helper process did not take the request: ${e.message}` }),
      );
    }).finally(() => signal?.removeEventListener('abort', cancel));
  }

  private start(): ChildProcess {
    const child = fork(compiledFile(__dirname, 'libs/git/src/helper-main.js'), [], {
      execArgv: ['--max-old-space-size=128'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (reply: HelperReply) => this.settle(reply));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      for (const id of [...this.pending.keys()])
        this.settle({ id, ok: false, message: `the helper process exited (${signal ?? code}) during the request` });
    });
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }

  private settle(reply: HelperReply) {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.child?.channel?.unref();
    if (reply.ok) waiting.resolve({ stdout: reply.stdout, stderr: reply.stderr });
    else waiting.reject(new HelperError(reply.message, reply.code, reply.stderr));
  }
}

let helperOfThisThread: HelperProcess | undefined;

/** This thread's helper process (an IPC channel belongs to the thread that opened it, so each worker thread has its own). */
export function threadHelper(): HelperProcess {
  helperOfThisThread ??= new HelperProcess();
  return helperOfThisThread;
}

/** A program run by this thread's helper process. Rejects like execFile: `code` (ENOENT, exit status) and `stderr`. */
export function execInHelper(
  file: string,
  args: string[],
  options: ExecOptions = {},
  signal?: AbortSignal,
): Promise<{ stdout: string; stderr: string }> {
  return threadHelper().call({ kind: 'exec', file, args, options }, signal);
}
