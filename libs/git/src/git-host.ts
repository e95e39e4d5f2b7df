import { ChildProcess, fork } from 'node:child_process';
import { compiledFile } from '../../runtime/src/compiled-file';
import type { GitCall } from './git-command';

type Reply = { id: number; ok: true; value: string } | { id: number; ok: false; message: string };

/**
 * git commands run by a small helper process instead of this one. Starting a program from a large
 * process stalls it: fork copies the page tables of the whole address space, about 20 ms at 300 MB
 * (measured on the 2-core machine), during which the event loop answers nothing; a pass starts about
 * ten git commands. From the helper (tens of MB) a start costs about 1 ms and the service never waits.
 * The helper starts with the first command and exits with its parent (its IPC channel closes).
 */
export class GitHost {
  private child?: ChildProcess;
  private readonly pending = new Map<number, { resolve: (out: string) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  /** The helper's process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  call(call: GitCall): Promise<string> {
    const child = this.child ?? this.start();
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A command waiting for its answer keeps this process alive; an idle helper does not.
      child.channel?.ref();
      child.send({ id, call }, (e) => e && this.settle({ id, ok: false, message: `the git helper process did not take the command: ${e.message}` }));
    });
  }

  private start(): ChildProcess {
    const child = fork(compiledFile(__dirname, 'libs/git/src/git-host-main.js'), [], { execArgv: ['--max-old-space-size=128'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (reply: Reply) => this.settle(reply));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      // Commands in flight are lost with it: they fail as retryable git failures, and the next command starts a new helper.
      for (const id of [...this.pending.keys()]) this.settle({ id, ok: false, message: `the git helper process exited (${signal ?? code}) during the command` });
    });
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }

  private settle(reply: Reply) {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.child?.channel?.unref();
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(new Error(reply.message));
  }
}
