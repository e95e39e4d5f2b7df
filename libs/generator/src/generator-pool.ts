/**
 * Where generation runs. In the service it must not run on the event loop that answers the API:
 * GeneratorPool runs each pass in a worker thread of a bounded pool at a lower CPU priority (the
 * kustomize processes a worker starts inherit it), so API answers and event hand-offs do not queue
 * behind YAML parsing, sealing and builds.
 */
import Piscina from 'piscina';
import { compiledFile } from '../../runtime/src';
import type { GenerateOptions, GenerateResult } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { generate } from './generate';
import type { WorkerOutcome } from './generate-worker';
import { preview, PreviewResult } from './preview';

/** What the steps and the preview endpoint generate through. */
export interface TreeGenerator {
  /** Aborting `signal` (a run step's deadline) ends the pass and the programs it started (its worker thread is stopped). */
  generate(options: GenerateOptions, signal?: AbortSignal): Promise<GenerateResult>;
  /** Aborting `signal` ends the pass and the programs it started (its worker thread is stopped). */
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
  generate,
  preview,
  close: async () => undefined,
  threadHeaps: async () => [],
};

export interface GeneratorPoolOptions {
  /** At most this many passes at once. */
  threads: number;
  /** Added to the workers' nice value (0 to 19): higher yields the CPU to the API. */
  niceIncrement: number;
}

function unwrap<T>(outcome: WorkerOutcome<T>): T {
  if (outcome.ok) return outcome.value;
  if (outcome.kind === 'input') throw new GeneratorInputError(outcome.message);
  if (outcome.kind === 'validation') throw new GeneratorValidationError(outcome.message);
  throw new Error(outcome.message);
}

export class GeneratorPool implements TreeGenerator {
  private readonly pool: Piscina;

  constructor(options: GeneratorPoolOptions) {
    this.pool = new Piscina({
      filename: compiledFile(__dirname, 'libs/generator/src/generate-worker.js'),
      // No thread until the first pass: API-only replicas and idle processes start and stay without one.
      minThreads: 0,
      maxThreads: options.threads,
      // Passes queue here rather than in threads: a pass holds a working copy and kustomize processes.
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      niceIncrement: options.niceIncrement,
    });
  }

  /**
   * Aborting stops the worker thread running the pass; the thread's helper process sees its channel
   * close and kills the kubectl and git it started. (A step that passed its deadline must not leave a
   * pass behind: a target repository can make kustomize build for hours, holding a thread and a core.)
   */
  async generate(options: GenerateOptions, signal?: AbortSignal): Promise<GenerateResult> {
    return unwrap(await this.pool.run(options, { name: 'generate', signal }));
  }

  /** Aborting stops the pass as for generate. */
  async preview(options: GenerateOptions, signal?: AbortSignal): Promise<PreviewResult> {
    return unwrap(await this.pool.run(options, { name: 'preview', signal }));
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
