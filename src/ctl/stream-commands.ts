/**
 * The commands that read the event stream (NATS, the read-only ops identity) and the read-model
 * (PostgreSQL): events, tail, replay, rebuild-projection, stream-info, status.
 */
import { UsageError } from '#libs/cli';
import type { JetStreamEventStore } from '#libs/event-store';
import type { StoredEvent } from '#libs/events';
import { runIdArgument } from './api-commands';
import type { CtlReadModel } from './read-model';

export interface Ctx {
  store: JetStreamEventStore;
  /** Opened on the first call, by the commands that use it. */
  readModel: () => Promise<CtlReadModel>;
  out: (line: string) => void;
  json: boolean;
}

const describe = (e: StoredEvent) =>
  `${String(e.seq).padStart(8)} ${e.time} ${e.run_id} ${e.type.padEnd(24)} ${JSON.stringify(e.data)}`;

function print(ctx: Ctx, e: StoredEvent) {
  ctx.out(ctx.json ? JSON.stringify(e) : describe(e));
}

/** The stream and its consumers as the ops tool prints them (snake_case, as in every JSON answer). */
async function consumerStates(store: JetStreamEventStore) {
  const { stream: s, consumers } = await store.consumers.states();
  return {
    stream: {
      name: s.name,
      messages: s.messages,
      first_seq: s.firstSeq,
      last_seq: s.lastSeq,
      bytes: s.bytes,
      replicas: s.replicas,
    },
    consumers: consumers.map((c) => ({
      name: c.name,
      pending: c.pending,
      ack_pending: c.ackPending,
      redelivered: c.redelivered,
      ack_floor_seq: c.ackFloorSeq,
      lag: c.lag,
    })),
  };
}

/** Numeric options arrive as numbers: main() checked them (wholeNumber) before connecting to anything. */
export const STREAM_COMMANDS: Record<string, (ctx: Ctx, args: string[], opts: Record<string, any>) => Promise<void>> = {
  async events(ctx, [arg]) {
    const runId = runIdArgument('events', arg);
    const { events } = await ctx.store.readRun(runId);
    if (events.length === 0) throw new UsageError(`run ${runId} has no events`);
    events.forEach((e) => print(ctx, e));
  },

  async tail(ctx, _args, opts) {
    const last = await ctx.store.lastSeq();
    const count: number = opts.count ?? 10;
    // The last events first, as tail does: from the run's history, or from the stream's end.
    const recent = opts.run
      ? (await ctx.store.readRun(runIdArgument('tail --run', opts.run))).events
      : (await ctx.store.readRange({ fromSeq: Math.max(1, last - count + 1), limit: Math.max(count, 1) })).events;
    for (const e of count === 0 ? [] : recent.slice(-count)) print(ctx, e);
    const limit: number = opts.new ?? Infinity;
    if (limit === 0) return;
    let seen = 0;
    const abort = new AbortController();
    process.once('SIGINT', () => abort.abort());
    await ctx.store.follow({
      runId: opts.run,
      afterSeq: last,
      signal: abort.signal,
      onEvent: (e) => void print(ctx, e),
      until: () => ++seen >= limit,
    });
  },

  async replay(ctx, _args, opts) {
    if (opts['from-seq'] === undefined && !opts.since)
      throw new UsageError('replay needs --from-seq N or --since TIME');
    const since = opts.since ? new Date(opts.since) : undefined;
    if (since && Number.isNaN(since.getTime())) throw new UsageError('--since must be an RFC 3339 time');
    const readModel = opts.apply ? await ctx.readModel() : undefined;
    let fromSeq: number | undefined = opts['from-seq'];
    let count = 0;
    let applied = 0;
    const handle = async (events: StoredEvent[]) => {
      for (const e of events) {
        count++;
        if (readModel) applied += (await readModel.apply(e)) ? 1 : 0;
        else print(ctx, e);
      }
    };
    // The whole log from a sequence: one reader through to the end. A time or a run: page by page with those filters.
    if (fromSeq !== undefined && !since && !opts.run) await ctx.store.scan({ fromSeq }, handle);
    for (let first = true; (since || opts.run) && (first || fromSeq !== undefined); first = false) {
      const page = await ctx.store.readRange({
        fromSeq,
        since: first ? since : undefined,
        limit: 1000,
        runId: opts.run,
      });
      await handle(page.events);
      fromSeq = page.nextSeq ?? undefined;
    }
    if (readModel)
      ctx.out(
        ctx.json
          ? JSON.stringify({ replayed: count, applied })
          : `replayed ${count} events into the read-model, ${applied} changed a row`,
      );
  },

  async 'rebuild-projection'(ctx, _args, opts) {
    const result = await (await ctx.readModel()).rebuild(ctx.store, { keepOld: Boolean(opts['keep-old']) });
    ctx.out(
      ctx.json
        ? JSON.stringify(result)
        : `rebuilt ${result.rows} rows from ${result.events} events in ${result.seconds.toFixed(2)} s`,
    );
  },

  async 'stream-info'(ctx) {
    const s = await consumerStates(ctx.store);
    if (ctx.json) return ctx.out(JSON.stringify(s));
    ctx.out(
      `stream ${s.stream.name}: ${s.stream.messages} messages, seq ${s.stream.first_seq}..${s.stream.last_seq}, ${s.stream.bytes} bytes, ${s.stream.replicas} replica(s)`,
    );
    for (const c of s.consumers)
      ctx.out(
        `  ${c.name.padEnd(40)} lag ${c.lag}, pending ${c.pending}, ack pending ${c.ack_pending}, redelivered ${c.redelivered}`,
      );
  },

  async status(ctx, _args, opts) {
    const s = await consumerStates(ctx.store);
    const readModel = await ctx.readModel();
    const stuckRuns = await readModel.stuckRuns(new Date(Date.now() - (opts['stuck-minutes'] ?? 30) * 60_000));
    const skipped = await readModel.skippedMessages();
    if (ctx.json) return ctx.out(JSON.stringify({ ...s, stuck_runs: stuckRuns, ...skipped }));
    await STREAM_COMMANDS['stream-info'](ctx, [], {});
    ctx.out(
      stuckRuns.length
        ? `runs without progress for ${opts['stuck-minutes'] ?? 30} min (re-drive with: scaffolderctl redrive <id>):`
        : 'no stuck runs',
    );
    for (const r of stuckRuns) ctx.out(`  ${r.id} ${r.status} at ${r.step} since ${r.updated_at}`);
    ctx.out(
      skipped.invalid_messages.length
        ? 'messages on event subjects that are not events (skipped by every reader):'
        : 'no invalid messages on event subjects',
    );
    for (const m of skipped.invalid_messages) ctx.out(`  seq ${m.seq} ${m.subject}: ${m.reason}`);
    ctx.out(
      skipped.refused_events.length
        ? "events their run's rules refused (someone else published them; they changed nothing):"
        : 'no refused events',
    );
    for (const r of skipped.refused_events) ctx.out(`  ${r.run_id} seq ${r.seq} ${r.type}: ${r.reason}`);
  },
};
