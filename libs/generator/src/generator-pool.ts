/**
 * Where generation runs. In the service it must not run on the event loop that answers the API:
 * GeneratorPool runs each pass in a worker thread of a bounded pool at a lower CPU priority (the
 * kustomize processes a worker starts inherit it), so API answers and event hand-offs do not queue
 * behind YAML parsing, sealing and builds.
 */
import { MessageChannel } from 'node:worker_threads';
import Piscina from 'piscina';
import { compiledFile } from '#libs/runtime';
import type { GenerateOptions, GenerateResult } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { generate } from './generate';
import { ABORT_PASS, PassStarted, PassTask, WorkerOutcome } from './generate-worker';
import { runAsPass } from './pass-signal';
import { preview, PreviewResult } from './preview';

/** What the steps and the preview endpoint generate through. */
export interface TreeGenerator {
  /** Aborting `signal` (a run step's deadline) ends the pass and the programs it started; the pass writes nothing after it. */
  generate(options: GenerateOptions, signal?: AbortSignal): Promise<GenerateResult>;
  /** Aborting `signal` ends the pass and the programs it started. */
  preview(options: GenerateOptions, signal?: AbortSignal): Promise<PreviewResult>;
  close(): Promise<void>;
  /** The V8 heap of each thread that generates apart from the caller's (none on the caller's own thread). */
  threadHeaps(): Promise<ThreadHeap[]>;
}

/** A generator thread's V8 heap, bytes: live objects (`used`) and what V8 holds for them (`total`). */
export interface ThreadHeap {
  used: number;
  total: number;
}

/** Generation on the caller's own thread (the command line, a runner Job doing one run). */
export const IN_PROCESS_GENERATOR: TreeGenerator = {
  generate: (options, signal) => runAsPass(signal, () => generate(options)),
  preview: (options, signal) => runAsPass(signal, () => preview(options)),
  close: async () => undefined,
  threadHeaps: async () => [],
};

export interface GeneratorPoolOptions {
  /** Worker threads (started as passes need them). */
  threads: number;
  /** Passes one thread runs at once (default PASSES_PER_THREAD). */
  passesPerThread?: number;
  /** Added to the workers' nice value (0 to 19): higher yields the CPU to the API. */
  niceIncrement: number;
}

function unwrap<T>(outcome: WorkerOutcome<T>): T {
  if (outcome.ok) return outcome.value;
  if (outcome.kind === 'input') throw new GeneratorInputError(outcome.message);
  if (outcome.kind === 'validation') throw new GeneratorValidationError(outcome.message);
  if (outcome.kind === 'aborted') throw new DOMException(`pass aborted: ${outcome.message}`, 'AbortError');
  throw new Error(outcome.message);
}

/**
 * Passes one thread runs at once by default. A pass spends most of its time waiting for kubectl: with one pass per thread the
 * thread idles meanwhile, and the passes queued for it with it; with two, one pass plans while the other builds, in
 * the same heap (a second thread costs another isolate). The cores stay busy, but the API's answers wait longer
 * for them, which is why GENERATOR_PASSES_PER_THREAD=1 remains a setting (figures: docs/benchmarks.md).
 */
export const PASSES_PER_THREAD = 2;
/**
 * How long an aborted pass has to end by itself before its thread is stopped (and with it the other pass on that
 * thread, which fails and is tried again by its step). Its kubectl is killed at once and the pass stops at its next
 * stage, so this only takes effect for JavaScript that does not return.
 */
export const ABORT_GRACE_MS = 10_000;

export class GeneratorPool implements TreeGenerator {
  private readonly pool: Piscina;

  constructor(options: GeneratorPoolOptions) {
    this.pool = new Piscina({
      filename: compiledFile(__dirname, 'libs/generator/src/generate-worker.js'),
      // No thread until the first pass: API-only replicas and idle processes start and stay without one.
      minThreads: 0,
      maxThreads: options.threads,
      // Passes queue here rather than in threads: a pass holds a working copy and kustomize processes.
      concurrentTasksPerWorker: options.passesPerThread ?? PASSES_PER_THREAD,
      idleTimeout: 60_000,
      niceIncrement: options.niceIncrement,
    });
  }

  /**
   * Aborting kills the pass's kubectl at once and stops the pass at its next stage (it writes nothing after
   * its plan); the call rejects when the pass has ended. (A step that passed its deadline must not leave a
   * pass behind: a target repository can make kustomize build for hours, holding a build slot and a core.)
   */
  async generate(options: GenerateOptions, signal?: AbortSignal): Promise<GenerateResult> {
    return unwrap(await this.runPass<GenerateResult>('generate', options, signal));
  }

  /** Aborting stops the pass as for generate. */
  async preview(options: GenerateOptions, signal?: AbortSignal): Promise<PreviewResult> {
    return unwrap(await this.runPass<PreviewResult>('preview', options, signal));
  }

  /**
   * A pass on a thread, with a port to abort it. Not piscina's own abort signal: piscina runs a task that has
   * one alone on its thread (aborting terminates the thread), which would keep PASSES_PER_THREAD at one.
   */
  private async runPass<T>(name: string, options: GenerateOptions, signal?: AbortSignal): Promise<WorkerOutcome<T>> {
    signal?.throwIfAborted();
    const { port1: control, port2 } = new MessageChannel();
    let thread: number | undefined;
    let stopThread: NodeJS.Timeout | undefined;
    const stopThreadLater = () => {
      stopThread ??= setTimeout(
        () => void this.pool.threads.find((t) => t.threadId === thread)?.terminate(),
        ABORT_GRACE_MS,
      );
    };
    let leaveQueue: (reason: unknown) => void = () => undefined;
    const abortedInQueue = new Promise<never>((_, reject) => (leaveQueue = reject));
    control.on('message', (started: PassStarted) => {
      thread = started.threadId;
      if (signal?.aborted) stopThreadLater();
    });
    const abort = () => {
      control.postMessage(ABORT_PASS);
      // Still queued: the caller goes at once; the task, when a thread takes it, finds the abort and ends before any work.
      if (thread === undefined) leaveQueue(new DOMException('pass aborted before it started', 'AbortError'));
      else stopThreadLater();
    };
    signal?.addEventListener('abort', abort, { once: true });
    const task: PassTask = { options, control: port2 };
    // Transferred, not copied: the worker holds the port's other end. (piscina's type for the list is derived from
    // MessagePort.postMessage's last overload in @types/node, an options object; piscina itself requires an array.)
    const ran = this.pool.run(task, { name, transferList: [port2] as never }).finally(() => {
      // The port stays open until the task ends, also after its caller left: a queued task must still read its abort.
      signal?.removeEventListener('abort', abort);
      clearTimeout(stopThread);
      control.close();
    });
    ran.catch(() => undefined); // its caller may have left already (aborted in the queue)
    return Promise.race([ran, abortedInQueue]);
  }

  /** Passes waiting for a thread (every thread already runs as many as it may). */
  get waitingPasses(): number {
    return this.pool.queueSize;
  }

  /** Each running worker's heap (a worker that exits meanwhile is left out). */
  async threadHeaps(): Promise<ThreadHeap[]> {
    const heaps = await Promise.all(
      // A thread that exits meanwhile rejects; asked through then(), a throw cannot fail the scrape either.
      this.pool.threads.map((thread) =>
        Promise.resolve()
          .then(() => thread.getHeapStatistics())
          .catch(() => undefined),
      ),
    );
    return heaps.filter((h) => h !== undefined).map((h) => ({ used: h.used_heap_size, total: h.total_heap_size }));
  }

  /** Waits for running passes to end, then stops the threads. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}
