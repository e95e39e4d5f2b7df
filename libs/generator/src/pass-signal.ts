import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The abort signal of the pass this code runs for. Passes share a generator thread (one's JavaScript runs
 * while another's kubectl builds), so a pass's signal cannot be a global of the thread; the programs a pass
 * starts and its checks between stages find it here instead of every function handing it on.
 */
const passSignals = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` as a pass that `signal` aborts. */
export function runAsPass<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  return signal ? passSignals.run(signal, work) : work();
}

/** The running pass's abort signal (undefined outside a pass, or for a pass nobody can abort). */
export function passSignal(): AbortSignal | undefined {
  return passSignals.getStore();
}

/** Throws the abort's reason when the running pass was aborted: a pass stops at its next stage instead of writing on. */
export function throwIfPassAborted(): void {
  passSignals.getStore()?.throwIfAborted();
}
