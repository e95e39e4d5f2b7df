import type { EventDraft } from '#libs/events';
import { Command, decide, fold, RunState } from '#libs/run-decider';

/** When every event of a `given` happened (the rules read no clock; a stall check's `now` is measured from it). */
export const GIVEN_TIME = '2026-01-01T00:00:00.000Z';

const stamped = (drafts: readonly EventDraft[]) => drafts.map((d) => ({ ...d, time: GIVEN_TIME }));

/** What a command may be refused with: the error, its class, or its message (a string or a pattern). */
type Refusal = Error | RegExp | string | (new (...args: never[]) => Error);

/**
 * The run's rules as specifications, pure (no store, no NATS): given the run's events, when a command is put to
 * it, then the events it appends, or the error it is refused with. `then` returns the run's history with what it
 * appended, so a specification walks on from there.
 */
export function given(...history: EventDraft[]) {
  const state = (): RunState => fold(stamped(history));
  return {
    state,
    when(command: Command) {
      const decided = () => decide(command, state());
      return {
        then(expected: EventDraft[]): EventDraft[] {
          expect(decided()).toEqual(expected);
          return [...history, ...expected];
        },
        thenRefused(error: Refusal): void {
          expect(decided).toThrow(error);
        },
      };
    },
  };
}
