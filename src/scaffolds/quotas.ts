import { Inject, Injectable } from '@nestjs/common';
import { tooMany } from '../common/api-error';
import type { CallerIdentity } from '../common/api-keys';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { RunReadModel } from '../projection/run-read-model';

const MINUTE_MS = 60_000;

/** A release that counts once, however often it is called. */
function once(release: () => void): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
}

/** Per-key times of what happened in the last minute (this process's own count). */
class MinuteWindow {
  private readonly times = new Map<string, number[]>();

  /** The key's times within the minute before `now`, oldest first. */
  recent(key: string, now: number): number[] {
    const recent = (this.times.get(key) ?? []).filter((t) => t > now - MINUTE_MS);
    this.times.set(key, recent);
    return recent;
  }

  record(key: string, now: number): void {
    this.times.set(key, [...this.recent(key, now), now]);
  }

  /** Seconds until the oldest of the key's times leaves the window (a full minute when none is known here). */
  retryAfter(key: string, now: number): number {
    const oldest = this.recent(key, now)[0];
    return oldest === undefined ? 60 : (oldest + MINUTE_MS - now) / 1000;
  }
}

/**
 * Per-key limits, answered 429 with Retry-After on both transports; admins are held to them too.
 * Active runs and creates per minute are counted in the read-model (shared by every replica) and,
 * because the projection trails the appends by a moment, also in this process's own window, so a
 * burst is refused even before it reaches PostgreSQL. SSE streams are this process's connections.
 * Previews append nothing, so they are counted in this process only (each replica has the limits).
 */
@Injectable()
export class Quotas {
  private readonly recentCreates = new MinuteWindow();
  private readonly recentPreviews = new MinuteWindow();
  private readonly previewsInFlight = new Map<string, number>();
  private readonly streams = new Map<string, number>();
  private totalStreams = 0;

  constructor(
    private readonly readModel: RunReadModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async beforeCreate(caller: CallerIdentity, now = Date.now()): Promise<void> {
    const { maxActiveRunsPerKey, maxCreatesPerMinutePerKey } = this.config.quotas;
    const local = this.recentCreates.recent(caller.name, now);
    // While PostgreSQL is down only this process's window counts: creates are still accepted (appends go on).
    const shared = await this.readModel
      .usage(caller.name, new Date(now - MINUTE_MS))
      .catch(() => ({ active: 0, createdSince: 0 }));
    if (shared.active >= maxActiveRunsPerKey) {
      throw tooMany(
        'too_many_active_runs',
        `key "${caller.name}" has ${shared.active} active runs (MAX_ACTIVE_RUNS_PER_KEY=${maxActiveRunsPerKey}); wait for one to finish`,
        30,
      );
    }
    if (Math.max(local.length, shared.createdSince) >= maxCreatesPerMinutePerKey) {
      const retryAfter = this.recentCreates.retryAfter(caller.name, now);
      throw tooMany(
        'too_many_creates',
        `key "${caller.name}" created ${maxCreatesPerMinutePerKey} runs in the last minute (MAX_CREATES_PER_MINUTE_PER_KEY)`,
        retryAfter,
      );
    }
    this.recentCreates.record(caller.name, now);
  }

  /**
   * A preview starts (a clone and a pass, as a run costs): refused over the per-minute or the
   * in-flight cap of the key; returns its release, to call when it has ended.
   */
  beginPreview(caller: CallerIdentity, now = Date.now()): () => void {
    const { maxPreviewsPerMinutePerKey, maxPreviewsInFlightPerKey } = this.config.quotas;
    const running = this.previewsInFlight.get(caller.name) ?? 0;
    if (running >= maxPreviewsInFlightPerKey) {
      throw tooMany(
        'too_many_previews',
        `key "${caller.name}" already has ${running} previews running (MAX_PREVIEWS_IN_FLIGHT_PER_KEY)`,
        5,
      );
    }
    if (this.recentPreviews.recent(caller.name, now).length >= maxPreviewsPerMinutePerKey) {
      const retryAfter = this.recentPreviews.retryAfter(caller.name, now);
      throw tooMany(
        'too_many_previews',
        `key "${caller.name}" asked for ${maxPreviewsPerMinutePerKey} previews in the last minute (MAX_PREVIEWS_PER_MINUTE_PER_KEY)`,
        retryAfter,
      );
    }
    this.recentPreviews.record(caller.name, now);
    this.previewsInFlight.set(caller.name, running + 1);
    return once(() => this.previewsInFlight.set(caller.name, (this.previewsInFlight.get(caller.name) ?? 1) - 1));
  }

  /** A Server-Sent Events stream opens: refused over the per-key or the total cap; returns its release. */
  openStream(caller: CallerIdentity): () => void {
    const { maxSseStreamsPerKey, maxSseStreams } = this.config.quotas;
    const mine = this.streams.get(caller.name) ?? 0;
    if (mine >= maxSseStreamsPerKey)
      throw tooMany(
        'too_many_streams',
        `key "${caller.name}" already follows ${mine} streams (MAX_SSE_STREAMS_PER_KEY)`,
        10,
      );
    if (this.totalStreams >= maxSseStreams)
      throw tooMany(
        'too_many_streams',
        `this replica already serves ${this.totalStreams} streams (MAX_SSE_STREAMS)`,
        10,
      );
    this.streams.set(caller.name, mine + 1);
    this.totalStreams++;
    return once(() => {
      this.streams.set(caller.name, (this.streams.get(caller.name) ?? 1) - 1);
      this.totalStreams--;
    });
  }

  /** How long one stream may last; the client resumes with Last-Event-ID. */
  get maxStreamMs(): number {
    return this.config.quotas.sseMaxSeconds * 1000;
  }
}
