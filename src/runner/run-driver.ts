import type { StoredEvent } from '#libs/events';
import { fold, isTerminal, RunState, runPlanOf, triggers } from '#libs/run-decider';
import type { StepProcessor } from '#libs/steps';

export interface RunDriverOptions {
  /** The run's events as the service has them; null once the service says the run has ended. */
  events: () => Promise<StoredEvent[] | null>;
  processors: StepProcessor[];
  /** How often the run is read while nothing is for this runner to do (default 1 s). */
  pollMs?: number;
  /** Aborted on shutdown: the driver stops between steps. */
  signal?: AbortSignal;
}

/** How the driver stopped: the run's terminal status, `ended` (the service said so), or `stopped` (shutdown). */
export type DriveOutcome = RunState['status'] | 'ended' | 'stopped';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * A runner Job's loop over its one run: read the run, hand the latest trigger of the step the run is at
 * to that step's processor (the same StepProcessor the service's consumers use), wait as its disposition
 * says, and repeat until the run has ended. A trigger is handed over again only when the processor asked
 * for it (a retry); a new trigger (an operator's re-drive) starts the step afresh.
 */
export async function driveRun(options: RunDriverOptions): Promise<DriveOutcome> {
  const deliveries = new Map<string, number>();
  const settled = new Set<string>();
  const pollMs = options.pollMs ?? 1000;
  for (;;) {
    if (options.signal?.aborted) return 'stopped';
    const events = await options.events();
    if (events === null) return 'ended';
    const state = fold(events);
    if (isTerminal(state)) return state.status;
    const step = state.step;
    const plan = runPlanOf(state);
    const trigger = step ? events.filter((e) => triggers(e, step, plan)).at(-1) : undefined;
    const processor = options.processors.find((p) => p.handler.step === step);
    if (!trigger || !processor || settled.has(trigger.id)) {
      await sleep(pollMs, options.signal);
      continue;
    }
    const deliveryCount = (deliveries.get(trigger.id) ?? 0) + 1;
    deliveries.set(trigger.id, deliveryCount);
    const disposition = await processor.handle([{ event: trigger, deliveryCount }]);
    if ('ack' in disposition) settled.add(trigger.id);
    else await sleep(disposition.nakDelayMs, options.signal);
  }
}
