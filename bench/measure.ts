import type { JetStreamEventStore } from '../libs/event-store/src';

/** Seconds a piece of work takes, and its result. */
export async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const t = process.hrtime.bigint();
  const result = await work();
  return { result, seconds: Number(process.hrtime.bigint() - t) / 1e9 };
}

/** Replay as scaffolderctl does it: every event read, parsed, upcast and validated, page by page. Returns the count. */
export async function replayAll(store: JetStreamEventStore): Promise<number> {
  let replayed = 0;
  for (let next: number | null = 1; next !== null;) {
    const page = await store.readRange({ fromSeq: next, limit: 1000 });
    replayed += page.events.length;
    next = page.nextSeq;
  }
  return replayed;
}
