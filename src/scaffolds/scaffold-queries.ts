import { Inject, Injectable, Optional } from '@nestjs/common';
import { EventStore, formatLogLine, RunLogStore } from '#libs/event-store';
import { EVENT_TYPES, isEventType, StoredEvent, TERMINAL_EVENTS } from '#libs/events';
import { withoutCredentials } from '#libs/git';
import { fold, isTerminal, RUN_STATUSES, type RunState } from '#libs/run-decider';
import { invalid, notFound } from '../common/api-error';
import { clusterFilter, fromReadModel, pageLimit } from '../common/list-queries';
import type { EventView } from '../common/api-shapes';
import { CallerIdentity, owns } from '../common/api-keys';
import { EVENT_STORE, RUN_LOGS } from '../event-store/event-store.module';
import { JOB_LOGS, type JobLogs } from '../kubernetes/job-logs';
import { RunReadModel } from '../projection/run-read-model';
import { RunView, toView } from '../projection/run-view';
import { decodeCursor, encodeCursor } from './cursor';
import { LiveRuns } from './live-runs';
import { checkId, requireRun } from './run-access';

/** How an event is shown to auditors and watchers. */
export const eventView = (e: StoredEvent): EventView => ({
  seq: e.seq,
  id: e.id,
  type: e.type,
  schema_version: e.schema_version,
  time: e.time,
  causation_id: e.causation_id,
  data: visibleData(e),
});

/** Event data as shown: a repository URL stored with credentials (accepted by older versions) is redacted. */
function visibleData(e: StoredEvent) {
  return e.type === 'ScaffoldRequested' ? { ...e.data, repo_url: withoutCredentials(e.data.repo_url) } : e.data;
}

/** The log's last line once a run has ended (whoever ended it: a step, the Job watcher, a cancel), from its events. */
function outcomeLine(state: RunState): string | null {
  if (!isTerminal(state)) return null;
  const level = state.status === 'succeeded' ? 'INFO' : state.status === 'failed' ? 'ERROR' : 'WARN';
  const commits =
    state.status === 'succeeded'
      ? ` (infra ${state.infraCommit?.slice(0, 12)}, full ${state.fullCommit?.slice(0, 12)})`
      : '';
  return `${state.finishedAt} ${level} [run] run ${state.status}: ${state.message}${commits}`;
}

/** Where the audit feed starts: after a cursor (a stream sequence) when given, which wins over `since`; both are checked. */
function auditStart(query: { since?: unknown; cursor?: unknown }): { fromSeq?: number; since?: Date } {
  const since = query.since === undefined ? undefined : new Date(String(query.since));
  if (since && Number.isNaN(since.getTime())) throw invalid('since', 'must be an RFC 3339 time');
  if (query.cursor === undefined) return { since };
  const fromSeq = Number(query.cursor);
  if (!Number.isInteger(fromSeq) || fromSeq < 1) throw invalid('cursor', 'is not a cursor this API returned');
  return { fromSeq };
}

/** What reads runs and their events, behind both the REST and the NATS API; nothing here appends. */
/** `work`, or undefined as soon as `signal` aborts (the work itself goes on unobserved). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(undefined);
      },
    );
  });
}

/** How long a followed run's stream may wait for the read-model to show its end (see ScaffoldQueries.projected). */
const PROJECTION_WAIT_MS = 5000;

@Injectable()
export class ScaffoldQueries {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(RUN_LOGS) private readonly runLogs: RunLogStore,
    private readonly readModel: RunReadModel,
    /** The runs this replica followed from their start (answered from memory). */
    private readonly live: LiveRuns,
    /** The run's Job pod logs (EXECUTOR=kubernetes). */
    @Optional() @Inject(JOB_LOGS) private readonly jobLogs?: JobLogs,
  ) {}

  /**
   * A run this replica followed from its start, from memory; else from the read-model, and a run the projection
   * has not reached yet folded from the stream (never a 404 after POST).
   */
  async get(id: unknown, caller: CallerIdentity): Promise<RunView> {
    const runId = checkId(id);
    const state = this.live.state(runId) ?? (await this.stored(runId));
    if (!state.request || !owns(caller, state.request.requested_by)) throw notFound();
    return toView(runId, state);
  }

  private async stored(runId: string): Promise<RunState> {
    const row = await fromReadModel(() => this.readModel.byId(runId));
    return row ? row.state : fold((await this.store.readRun(runId)).events);
  }

  async list(
    query: { status?: unknown; cluster_name?: unknown; limit?: unknown; cursor?: unknown },
    caller: CallerIdentity,
  ): Promise<{ items: RunView[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit, 50, 500);
    if (query.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(String(query.status)))
      throw invalid('status', `must be one of ${RUN_STATUSES.join(', ')}`);
    const clusterName = clusterFilter(query.cluster_name);
    const after = query.cursor === undefined ? undefined : decodeCursor(String(query.cursor));
    const owner = caller.role === 'admin' ? undefined : caller.name;
    const rows = await fromReadModel(() =>
      this.readModel.page({
        status: query.status === undefined ? undefined : String(query.status),
        clusterName,
        after,
        owner,
        limit,
      }),
    );
    const items = rows.map((r) => toView(r.id, r.state));
    const last = rows[rows.length - 1];
    return { items, next_cursor: rows.length === limit && last ? encodeCursor(last.created_at, last.id) : null };
  }

  async events(id: unknown, caller: CallerIdentity) {
    const { events } = await requireRun(this.store, id, caller);
    return { items: events.map(eventView) };
  }

  /** The audit log across runs, from the stream itself: since a time or a cursor, optionally one type. */
  async allEvents(
    query: { since?: unknown; type?: unknown; limit?: unknown; cursor?: unknown },
    caller: CallerIdentity,
  ) {
    const limit = pageLimit(query.limit, 100, 1000);
    const types = query.type === undefined ? undefined : String(query.type).split(',');
    if (types && !types.every(isEventType)) throw invalid('type', `must be event types: ${EVENT_TYPES.join(', ')}`);
    const { events, nextSeq } = await this.store.readRange({ ...auditStart(query), limit, types });
    const visible = caller.role === 'admin' ? events : await this.ownedBy(caller, events);
    return {
      items: visible.map((e) => ({ run_id: e.run_id, ...eventView(e) })),
      next_cursor: nextSeq === null ? null : String(nextSeq),
    };
  }

  /** The events of runs this caller owns (a page of the audit feed may then hold fewer than `limit`). */
  private async ownedBy(caller: CallerIdentity, events: StoredEvent[]): Promise<StoredEvent[]> {
    const owners = new Map<string, string | undefined>();
    for (const runId of new Set(events.map((e) => e.run_id)))
      owners.set(runId, fold((await this.store.readRun(runId)).events).request?.requested_by);
    return events.filter((e) => owners.get(e.run_id) === caller.name);
  }

  /** Follows a run's events live (SSE, NATS watchers) from after `afterSeq`, ending after the terminal event. */
  async follow(
    id: unknown,
    caller: CallerIdentity,
    afterSeq: number | undefined,
    onEvent: (e: ReturnType<typeof eventView>) => void | Promise<void>,
    signal: AbortSignal,
  ) {
    const { runId, events } = await requireRun(this.store, id, caller);
    const last = events[events.length - 1];
    if (TERMINAL_EVENTS.includes(last.type) && afterSeq !== undefined && afterSeq >= last.seq) return;
    await this.store.follow({
      runId,
      afterSeq,
      signal,
      onEvent: (e) => onEvent(eventView(e)),
      until: (e) => TERMINAL_EVENTS.includes(e.type),
    });
    await this.projected(runId, signal);
  }

  /**
   * Waits, at most PROJECTION_WAIT_MS, until the read-model shows the run ended: a client that reads the run once
   * the stream has ended (GET, a list) then sees what the stream said, not a run still running. The projection
   * trails the stream by milliseconds; a projection that is down only delays the stream's end by that much.
   */
  private async projected(runId: string, signal: AbortSignal): Promise<void> {
    const until = Date.now() + PROJECTION_WAIT_MS;
    // A few reads at most (the pool serves every API call), none after the client left or the stream's time ran out.
    for (let pause = 20; !signal.aborted && Date.now() < until; pause = Math.min(pause * 2, 500)) {
      const row = await abortable(
        this.readModel.byId(runId).catch(() => undefined),
        signal,
      );
      if (row && isTerminal(row.state)) return;
      await abortable(new Promise((resolve) => setTimeout(resolve, pause)), signal);
    }
  }

  /** The run's log lines (already redacted when written), oldest first, as text. */
  async logs(id: unknown, caller: CallerIdentity): Promise<string> {
    const { runId, events } = await requireRun(this.store, id, caller);
    const entries = await this.runLogs.read(runId);
    const lines = entries.map(formatLogLine);
    if (this.jobLogs) {
      const pods = await this.jobLogs(runId).catch((e) => `--- Job logs unavailable: ${(e as Error).message} ---\n`);
      if (pods) lines.push(pods.trimEnd());
    }
    const outcome = outcomeLine(fold(events));
    if (outcome) lines.push(outcome);
    if (lines.length === 0) return '';
    return lines.join('\n') + '\n';
  }
}
