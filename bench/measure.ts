import type { JetStreamEventStore } from '../libs/event-store/src';

/** Seconds a piece of work takes, and its result. */
export async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const t = process.hrtime.bigint();
  const result = await work();
  return { result, seconds: Number(process.hrtime.bigint() - t) / 1e9 };
}

/** Replay as `scaffolderctl replay --from-seq 1` does it: every event read, parsed, upcast and validated, through one reader. Returns the count. */
export function replayAll(store: JetStreamEventStore): Promise<number> {
  return store.scan({ fromSeq: 1 }, async () => undefined);
}
