/**
 * The generator as a worker-thread task (run by GeneratorPool): the pass runs off the caller's
 * event loop. Errors cross the thread boundary as data, so the caller can throw the same class.
 */
import type { GenerateOptions } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { generate as generateTree } from './generate';
import { preview as previewTree } from './preview';

export type WorkerErrorKind = 'input' | 'validation' | 'internal';
export type WorkerOutcome<T> = { ok: true; value: T } | { ok: false; kind: WorkerErrorKind; message: string };

async function outcome<T>(work: () => Promise<T>): Promise<WorkerOutcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (e) {
    const kind: WorkerErrorKind =
      e instanceof GeneratorInputError ? 'input' : e instanceof GeneratorValidationError ? 'validation' : 'internal';
    return { ok: false, kind, message: (e as Error).message };
  }
}

export const generate = (options: GenerateOptions) => outcome(() => generateTree(options));
export const preview = (options: GenerateOptions) => outcome(() => previewTree(options));
