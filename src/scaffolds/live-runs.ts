import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import type { EventStore } from '#libs/event-store';
import type { StoredEvent } from '#libs/events';
import { evolve, initialState, type RunState } from '#libs/run-decider';
import { EVENT_STORE } from '../event-store/event-store.module';
import type { Logger } from 'pino';
import { LOGGER } from '../logging/logging.module';

/** Runs whose state a replica keeps (the most recently changed): a GET of another is read from PostgreSQL. */
export const LIVE_RUNS_MAX = 2000;
/** How long a follow that failed (NATS away) waits before following again. */
const REFOLLOW_MS = 1000;

/**
 * The state of each run this replica saw begin, folded from the event log as it is appended: a GET of such a run
 * is answered from memory, without a round trip to PostgreSQL. On two busy cores that round trip was what a GET's
 * tail waited for (PostgreSQL's process waiting for a core), and a replica answers such runs while PostgreSQL is
 * down. A run is kept only from its first event (ScaffoldRequested), so a kept state is always its whole history;
 * older runs, runs past LIVE_RUNS_MAX and every run while the follow is interrupted are the read-model's. The
 * follow is one ordered reader of the log per replica (JetStream redelivers nothing and skips nothing); after
 * an interruption it starts again from the log's end with nothing kept, as a run it missed an event of must not
 * be answered from memory.
 */
@Injectable()
export class LiveRuns implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly runs = new Map<string, RunState>();
  private readonly stop = new AbortController();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Optional() @Inject(LOGGER) private readonly logger?: Logger,
  ) {}

  /** The run's state when this replica followed it from its first event, else undefined (read the read-model). */
  state(runId: string): RunState | undefined {
    return this.runs.get(runId);
  }

  onApplicationBootstrap(): void {
    void this.followAlways();
  }

  onModuleDestroy(): void {
    this.stop.abort();
  }

  /** Applies one appended event: a new run is kept from its first event, a kept run moves on. */
  apply(event: StoredEvent): void {
    const before = this.runs.get(event.run_id);
    if (!before && event.type !== 'ScaffoldRequested') return;
    // Map order is the eviction order: the run changed last goes to the end, the one changed longest ago goes.
    this.runs.delete(event.run_id);
    this.runs.set(event.run_id, evolve(before ?? initialState, event));
    if (this.runs.size > LIVE_RUNS_MAX) this.runs.delete(this.runs.keys().next().value!);
  }

  private async followAlways(): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        const afterSeq = await this.store.lastSeq();
        await this.store.follow({ afterSeq, signal: this.stop.signal, onEvent: (e) => this.apply(e) });
      } catch (e) {
        if (this.stop.signal.aborted) return;
        this.logger?.warn({ err: String(e) }, 'following the event log for GET answers paused');
      }
      // A follow that ended for any reason but shutdown may have missed events: nothing kept is trusted.
      this.runs.clear();
      await new Promise((r) => setTimeout(r, REFOLLOW_MS));
    }
  }
}
