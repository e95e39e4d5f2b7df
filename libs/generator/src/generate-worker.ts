/**
 * The generator as a worker-thread task (run by GeneratorPool): the pass runs off the caller's
 * event loop. Errors cross the thread boundary as data, so the caller can throw the same class.
 * A task carries a port on which the pool says "abort" (the run's step passed its deadline): the
 * pass's kubectl is killed at once and the pass stops at its next stage, without stopping the thread,
 * which other passes share.
 */
import type { MessagePort } from 'node:worker_threads';
import { receiveMessageOnPort, threadId } from 'node:worker_threads';
import type { GenerateOptions } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { generate as generateTree } from './generate';
import { runAsPass } from './pass-signal';
import { preview as previewTree } from './preview';

export type WorkerErrorKind = 'input' | 'validation' | 'aborted' | 'internal';
export type WorkerOutcome<T> = { ok: true; value: T } | { ok: false; kind: WorkerErrorKind; message: string };

/** A pass as the pool sends it: its options, and the port that aborts it (transferred with the task). */
export interface PassTask {
  options: GenerateOptions;
  control: MessagePort;
}

/** The pool's word on a task's port that aborts the pass. */
export const ABORT_PASS = 'abort';
/** What the worker tells the pool on a task's port as the pass starts: the thread that runs it. */
export interface PassStarted {
  threadId: number;
}

async function outcome<T>({ control }: PassTask, work: () => Promise<T>): Promise<WorkerOutcome<T>> {
  const abort = new AbortController();
  // An abort sent while the task was queued is already on the port: read now, before any work (a listener would
  // hear it only after the pass's first synchronous stretch).
  if (receiveMessageOnPort(control)?.message === ABORT_PASS) abort.abort();
  control.on('message', (word) => word === ABORT_PASS && abort.abort());
  control.postMessage({ threadId } satisfies PassStarted);
  try {
    abort.signal.throwIfAborted();
    return { ok: true, value: await runAsPass(abort.signal, work) };
  } catch (e) {
    const kind: WorkerErrorKind = abort.signal.aborted
      ? 'aborted'
      : e instanceof GeneratorInputError
        ? 'input'
        : e instanceof GeneratorValidationError
          ? 'validation'
          : 'internal';
    return { ok: false, kind, message: (e as Error).message };
  } finally {
    control.close();
  }
}

export const generate = (task: PassTask) => outcome(task, () => generateTree(task.options));
export const preview = (task: PassTask) => outcome(task, () => previewTree(task.options));
