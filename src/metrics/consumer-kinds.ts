import type { ConsumerState } from '#libs/event-store';
import { STEPS } from '#libs/events';
import { durableNameFor } from '#libs/steps';
import { LAUNCHER, PROJECTOR } from '../event-store/consumer-names';

/** The label value every consumer that is not one of the service's own durables is counted under. */
export const OTHER_CONSUMERS = 'other';

/**
 * The `consumer` label a durable's figures go under. A label value per consumer name would grow with
 * whatever durables sit on the stream (the per-run `step-<step>-run-<id>` of earlier versions, one a
 * run), so only the service's own keep their name; a per-run one counts under its step's.
 */
export function consumerKind(name: string): string {
  const own = [PROJECTOR, LAUNCHER, ...STEPS.map(durableNameFor)];
  const perRun = /^(step-.+?)-run-.+$/.exec(name)?.[1];
  if (own.includes(name)) return name;
  if (perRun && own.includes(perRun)) return perRun;
  return OTHER_CONSUMERS;
}

/** The figures of one label value: the furthest behind of its consumers, their pending and redelivered summed. */
export interface ConsumerKindFigures {
  lag: number;
  pending: number;
  redelivered: number;
}

export function figuresByKind(consumers: readonly ConsumerState[]): Map<string, ConsumerKindFigures> {
  const kinds = new Map<string, ConsumerKindFigures>();
  for (const c of consumers) {
    const kind = consumerKind(c.name);
    const seen = kinds.get(kind) ?? { lag: 0, pending: 0, redelivered: 0 };
    kinds.set(kind, {
      lag: Math.max(seen.lag, c.lag),
      pending: seen.pending + c.pending,
      redelivered: seen.redelivered + c.redelivered,
    });
  }
  return kinds;
}
