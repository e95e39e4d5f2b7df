import type { ScaffoldEvent, StoredEvent } from '#libs/events';
import { ConcurrencyConflict, EventStore, FollowOptions, RangeQuery, ScanRange } from './event-store';

/**
 * The event log in memory, with the JetStream store's rules (per-run expected sequence, duplicate
 * event ids refused, one global sequence): for unit tests of the scaffolds providers, the
 * processors and the projection without a server.
 */
const SCAN_BATCH = 1000;

export class InMemoryEventStore implements EventStore {
  private readonly log: StoredEvent[] = [];
  private readonly ids = new Set<string>();
  private readonly listeners = new Set<(e: StoredEvent) => void>();

  async readRun(runId: string): Promise<{ events: StoredEvent[]; lastSeq: number }> {
    const events = this.log.filter((e) => e.run_id === runId);
    return { events, lastSeq: events.at(-1)?.seq ?? 0 };
  }

  private lastSeqOf(runId: string): number {
    for (let i = this.log.length - 1; i >= 0; i--) if (this.log[i].run_id === runId) return this.log[i].seq;
    return 0;
  }

  async lastSeq(): Promise<number> {
    return this.log.at(-1)?.seq ?? 0;
  }

  async append(runId: string, events: ScaffoldEvent[], expectedLastSeq: number): Promise<StoredEvent[]> {
    // Checked and written without an await between them, as the server does atomically.
    if (this.lastSeqOf(runId) !== expectedLastSeq || events.some((e) => this.ids.has(e.id)))
      throw new ConcurrencyConflict(runId);
    const stored = events.map((e, i) => ({ ...e, run_id: runId, seq: this.log.length + i + 1 }));
    for (const e of stored) {
      this.log.push(e);
      this.ids.add(e.id);
      this.listeners.forEach((listener) => listener(e));
    }
    return stored;
  }

  async readRange(q: RangeQuery): Promise<{ events: StoredEvent[]; nextSeq: number | null }> {
    const from = q.fromSeq ?? 1;
    const candidates = this.log.filter(
      (e) =>
        e.seq >= from && (!q.since || Date.parse(e.time) >= q.since.getTime()) && (!q.runId || e.run_id === q.runId),
    );
    const events: StoredEvent[] = [];
    let lastLooked = 0;
    for (const e of candidates) {
      lastLooked = e.seq;
      if (!q.types || q.types.includes(e.type)) events.push(e);
      if (events.length >= q.limit) break;
    }
    const last = await this.lastSeq();
    return { events, nextSeq: lastLooked > 0 && lastLooked < last ? lastLooked + 1 : null };
  }

  async scan(range: ScanRange, onBatch: (events: StoredEvent[]) => Promise<void>): Promise<number> {
    const until = range.untilSeq ?? (await this.lastSeq());
    const events = this.log.filter((e) => e.seq >= range.fromSeq && e.seq <= until);
    const size = range.batchSize ?? SCAN_BATCH;
    for (let i = 0; i < events.length; i += size) await onBatch(events.slice(i, i + size));
    return events.length;
  }

  async follow(opts: FollowOptions): Promise<void> {
    const matches = (e: StoredEvent) => (!opts.runId || e.run_id === opts.runId) && e.seq > (opts.afterSeq ?? 0);
    const queue = this.log.filter(matches);
    let wake: () => void = () => undefined;
    const listener = (e: StoredEvent) => {
      if (matches(e)) queue.push(e);
      wake();
    };
    this.listeners.add(listener);
    opts.signal?.addEventListener('abort', () => wake(), { once: true });
    try {
      while (!opts.signal?.aborted) {
        const next = queue.shift();
        if (!next) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        await opts.onEvent(next);
        if (opts.until?.(next)) return;
      }
    } finally {
      this.listeners.delete(listener);
    }
  }
}
