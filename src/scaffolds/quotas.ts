import { Inject, Injectable } from '@nestjs/common';
import { tooMany } from '../common/api-error';
import type { CallerIdentity } from '../common/api-keys';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { RunReadModel } from '../projection/run-read-model';

const MINUTE_MS = 60_000;

/**
 * Per-key limits, answered 429 with Retry-After on both transports; admins are held to them too.
 * Active runs and creates per minute are counted in the read-model (shared by every replica) and,
 * because the projection trails the appends by a moment, also in this process's own window, so a
 * burst is refused even before it reaches PostgreSQL. SSE streams are this process's connections.
 */
@Injectable()
export class Quotas {
  private readonly recentCreates = new Map<string, number[]>();
  private readonly streams = new Map<string, number>();
  private totalStreams = 0;

  constructor(
    private readonly readModel: RunReadModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async beforeCreate(caller: CallerIdentity, now = Date.now()): Promise<void> {
    const { maxActiveRunsPerKey, maxCreatesPerMinutePerKey } = this.config.quotas;
    const local = (this.recentCreates.get(caller.name) ?? []).filter((t) => t > now - MINUTE_MS);
    // While PostgreSQL is down only this process's window counts: creates are still accepted (appends go on).
    const shared = await this.readModel.usage(caller.name, new Date(now - MINUTE_MS)).catch(() => ({ active: 0, createdSince: 0 }));
    if (shared.active >= maxActiveRunsPerKey) {
      throw tooMany('too_many_active_runs', `key "${caller.name}" has ${shared.active} active runs (MAX_ACTIVE_RUNS_PER_KEY=${maxActiveRunsPerKey}); wait for one to finish`, 30);
    }
    if (Math.max(local.length, shared.createdSince) >= maxCreatesPerMinutePerKey) {
      const retryAfter = local.length > 0 ? (local[0] + MINUTE_MS - now) / 1000 : 60;
      throw tooMany('too_many_creates', `key "${caller.name}" created ${maxCreatesPerMinutePerKey} runs in the last minute (MAX_CREATES_PER_MINUTE_PER_KEY)`, retryAfter);
    }
    this.recentCreates.set(caller.name, [...local, now]);
  }

  /** A Server-Sent Events stream opens: refused over the per-key or the total cap; returns its release. */
  openStream(caller: CallerIdentity): () => void {
    const { maxSseStreamsPerKey, maxSseStreams } = this.config.quotas;
    const mine = this.streams.get(caller.name) ?? 0;
    if (mine >= maxSseStreamsPerKey) throw tooMany('too_many_streams', `key "${caller.name}" already follows ${mine} streams (MAX_SSE_STREAMS_PER_KEY)`, 10);
    if (this.totalStreams >= maxSseStreams) throw tooMany('too_many_streams', `this replica already serves ${this.totalStreams} streams (MAX_SSE_STREAMS)`, 10);
    this.streams.set(caller.name, mine + 1);
    this.totalStreams++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.streams.set(caller.name, (this.streams.get(caller.name) ?? 1) - 1);
      this.totalStreams--;
    };
  }

  /** How long one stream may last; the client resumes with Last-Event-ID. */
  get maxStreamMs(): number {
    return this.config.quotas.sseMaxSeconds * 1000;
  }
}
