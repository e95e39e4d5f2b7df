/**
 * scaffolderctl: the ops tool (no `nats` CLI is packaged here). Talks to NATS (NATS_URL and the NATS_*
 * credentials, the read-only ops identity) and PostgreSQL (DATABASE_URL); what changes a run (redrive, cancel)
 * goes through the service's REST API (SCAFFOLDER_URL, an admin key); `scaffolderctl --help` and `scaffolderctl COMMAND --help` say how.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { JetStreamEventStore } from '../libs/event-store/src';
import { isRunId, StoredEvent } from '../libs/events/src';
import { RefusedEvent } from '../libs/run-decider/src';
import { ApiRefusal, apiTarget, CtlError, postRunAction } from './ctl-api';
import { CtlModule } from './app/ctl.module';
import { AppConfig, loadConfig } from './config/config';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import { makeLogger } from './logging/logger';
import { makeDataSource } from './projection/data-source';
import { SkippedStreamMessage } from './projection/entities';
import { RunReadModel } from './projection/run-read-model';
import { applyEvent } from './projection/projector';
import { rebuildProjection } from './projection/rebuild';
import { argumentError, closest, VERSION } from '../libs/cli/src';

const API_OPTIONS = [
  '--url URL         the service (default SCAFFOLDER_URL)',
  '--api-key-file F  a file holding an admin API key (default SCAFFOLDER_API_KEY_FILE; never the key itself)',
  '--json            the run as the service answers, as JSON',
];

/** Every command: its arguments, what it does and its options (the help texts are made from this table). */
const COMMAND_HELP: Record<string, { args: string; does: string; options: string[] }> = {
  events: {
    args: 'RUN',
    does: "a run's history from the stream",
    options: ['--json            one event per line as JSON'],
  },
  tail: {
    args: '',
    does: 'the last events, then new ones as they are appended (Ctrl-C stops)',
    options: [
      '--run ID          one run only',
      '--count N         how many of the last events to print first (default 10)',
      '--new N           stop after N new events',
      '--json            JSON lines',
    ],
  },
  replay: {
    args: '',
    does: 'print events again from a sequence or a time, or re-feed them to the read-model',
    options: [
      '--from-seq N      from stream sequence N',
      '--since TIME      from an RFC 3339 time',
      '--run ID          one run only',
      '--apply           apply them to the read-model instead of printing',
      '--json            JSON lines',
    ],
  },
  'rebuild-projection': {
    args: '',
    does: 'rebuild the read-model from sequence 1 and swap it in',
    options: ['--keep-old        keep the previous table as scaffold_runs_old', '--json            the result as JSON'],
  },
  'stream-info': {
    args: '',
    does: 'the event stream and every consumer with its lag',
    options: ['--json            as JSON'],
  },
  status: {
    args: '',
    does: 'stream-info plus runs without progress and messages no run accepted (skipped and refused)',
    options: ['--stuck-minutes N runs without progress for N minutes (default 30)', '--json            as JSON'],
  },
  redrive: {
    args: 'RUN',
    does: "run a run's current step again (idempotent), through the service's API with an admin key",
    options: API_OPTIONS,
  },
  cancel: {
    args: 'RUN',
    does: "cancel a run at its next step boundary, through the service's API with an admin key",
    options: API_OPTIONS,
  },
};

const ENVIRONMENT = `Environment:
  NATS_URL                      NATS servers, comma-separated (default nats://127.0.0.1:4222)
  NATS_CREDS | NATS_NKEY_SEED_FILE | NATS_USER + NATS_PASSWORD(_FILE) | NATS_TOKEN(_FILE)
                                how to authenticate (deploy/nats: the ops identity)
  NATS_TLS_CA, NATS_TLS_CERT, NATS_TLS_KEY, NATS_INBOX_PREFIX
  DATABASE_URL, DATABASE_SSL_CA the read-model (status, replay --apply, rebuild-projection)
  SCAFFOLDER_URL                the service's REST API (redrive, cancel: what changes a run goes through it)
  SCAFFOLDER_API_KEY_FILE | SCAFFOLDER_API_KEY
                                an admin API key for redrive and cancel (the ops NATS identity only reads)
  LOG_LEVEL                     debug shows the framework's own lines`;

const USAGE = `usage: scaffolderctl COMMAND [arguments] [options]

Commands:
${Object.entries(COMMAND_HELP)
  .map(([name, c]) => `  ${`${name} ${c.args}`.padEnd(22)}${c.does}`)
  .join('\n')}

Options: --json (machine-readable output), --help (this text, or COMMAND --help), --version

${ENVIRONMENT}`;

function commandHelp(name: string): string {
  const c = COMMAND_HELP[name];
  return `usage: scaffolderctl ${name}${c.args ? ` ${c.args}` : ''} [options]\n\n${c.does}\n\nOptions:\n${c.options.map((o) => `  ${o}`).join('\n')}\n\n${ENVIRONMENT}`;
}

/** parseArgs's table of every option (its names feed "did you mean"). */
const OPTIONS = {
  json: { type: 'boolean' },
  run: { type: 'string' },
  count: { type: 'string' },
  new: { type: 'string' },
  'from-seq': { type: 'string' },
  since: { type: 'string' },
  apply: { type: 'boolean' },
  'keep-old': { type: 'boolean' },
  'stuck-minutes': { type: 'string' },
  url: { type: 'string' },
  'api-key-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;
const OPTION_NAMES = Object.keys(OPTIONS);

/** A run id argument: present and a UUID, or a message that says so. */
function runIdArgument(command: string, runId: string | undefined): string {
  if (!runId) throw new CtlError(`${command} needs a run id`);
  if (!isRunId(runId))
    throw new CtlError(`"${runId}" is not a run id (run ids are UUIDs, e.g. 6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60)`);
  return runId;
}

export { CtlError };

interface Ctx {
  store: JetStreamEventStore;
  db: () => Promise<DataSource>;
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

/** What the projector recorded of messages no run accepted: the newest 20 of each kind. */
async function skippedMessages(ds: DataSource) {
  const invalid = await ds.getRepository(SkippedStreamMessage).find({ order: { seq: 'DESC' }, take: 20 });
  const rows: Array<{ id: string; refused: RefusedEvent[] }> = await ds.query(
    `SELECT id, state->'refused' AS refused FROM scaffold_runs WHERE jsonb_array_length(COALESCE(state->'refused', '[]'::jsonb)) > 0 ORDER BY updated_at DESC LIMIT 20`,
  );
  return {
    invalid_messages: invalid.map((m) => ({ seq: Number(m.seq), subject: m.subject, reason: m.reason })),
    refused_events: rows.flatMap((r) => r.refused.map((e) => ({ run_id: r.id, ...e }))),
  };
}

const commands: Record<string, (ctx: Ctx, args: string[], opts: Record<string, any>) => Promise<void>> = {
  async events(ctx, [arg]) {
    const runId = runIdArgument('events', arg);
    const { events } = await ctx.store.readRun(runId);
    if (events.length === 0) throw new CtlError(`run ${runId} has no events`);
    events.forEach((e) => print(ctx, e));
  },

  async tail(ctx, _args, opts) {
    const last = await ctx.store.lastSeq();
    const count = opts.count === undefined ? 10 : Number(opts.count);
    if (!Number.isInteger(count) || count < 0) throw new CtlError('--count must be a whole number');
    // The last events first, as tail does: from the run's history, or from the stream's end.
    const recent = opts.run
      ? (await ctx.store.readRun(runIdArgument('tail --run', opts.run))).events
      : (await ctx.store.readRange({ fromSeq: Math.max(1, last - count + 1), limit: Math.max(count, 1) })).events;
    for (const e of count === 0 ? [] : recent.slice(-count)) print(ctx, e);
    const limit = opts.new === undefined ? Infinity : Number(opts.new);
    if (!(limit >= 0)) throw new CtlError('--new must be a whole number');
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
    if (!opts['from-seq'] && !opts.since) throw new CtlError('replay needs --from-seq N or --since TIME');
    const since = opts.since ? new Date(opts.since) : undefined;
    if (since && Number.isNaN(since.getTime())) throw new CtlError('--since must be an RFC 3339 time');
    const ds = opts.apply ? await ctx.db() : undefined;
    let fromSeq: number | undefined = opts['from-seq'] ? Number(opts['from-seq']) : undefined;
    let count = 0;
    let applied = 0;
    const handle = async (events: StoredEvent[]) => {
      for (const e of events) {
        count++;
        if (ds) applied += (await ds.transaction((m) => applyEvent(m, e))) ? 1 : 0;
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
    if (ds)
      ctx.out(
        ctx.json
          ? JSON.stringify({ replayed: count, applied })
          : `replayed ${count} events into the read-model, ${applied} changed a row`,
      );
  },

  async 'rebuild-projection'(ctx, _args, opts) {
    const result = await rebuildProjection(ctx.store, await ctx.db(), { keepOld: Boolean(opts['keep-old']) });
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
    const ds = await ctx.db();
    const stuckAfter = new Date(Date.now() - Number(opts['stuck-minutes'] ?? 30) * 60_000);
    const stuck = await new RunReadModel(ds).stuck(stuckAfter);
    const stuckRuns = stuck.map((r) => ({
      id: r.id,
      status: r.status,
      step: r.step,
      updated_at: r.updated_at.toISOString(),
    }));
    const skipped = await skippedMessages(ds);
    if (ctx.json) return ctx.out(JSON.stringify({ ...s, stuck_runs: stuckRuns, ...skipped }));
    await commands['stream-info'](ctx, [], {});
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

/** What changes a run: the service's API decides and appends, never this tool (#28). No NATS, no database. */
const apiCommands: Record<
  string,
  (args: string[], opts: Record<string, any>, env: NodeJS.ProcessEnv) => Promise<string>
> = Object.fromEntries(
  (['redrive', 'cancel'] as const).map((action) => [
    action,
    async ([arg], opts, env) => {
      const runId = runIdArgument(action, arg);
      const run = await postRunAction(apiTarget(env, opts), runId, action);
      return opts.json
        ? JSON.stringify(run)
        : `${action} of ${runId} accepted: ${run?.status ?? '?'} at ${run?.step ?? '-'}`;
    },
  ]),
);

async function runApiCommand(
  command: string,
  args: string[],
  opts: Record<string, any>,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  err: (text: string) => void,
): Promise<number> {
  try {
    out(await apiCommands[command](args, opts, env));
    return 0;
  } catch (e) {
    err(`scaffolderctl: ${(e as Error).message}\n`);
    return e instanceof ApiRefusal ? 1 : e instanceof CtlError ? 2 : 1;
  }
}

export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: OPTIONS,
    });
  } catch (e) {
    err(`scaffolderctl: ${argumentError(e as Error, OPTION_NAMES)}\n${USAGE}\n`);
    return 2;
  }
  const [command, ...args] = parsed.positionals;
  if (parsed.values.version) {
    out(VERSION);
    return 0;
  }
  // Only the commands defined above: never an inherited property such as toString.
  const run = command !== undefined && Object.hasOwn(commands, command) ? commands[command] : undefined;
  const viaApi = command !== undefined && Object.hasOwn(apiCommands, command);
  if (parsed.values.help && (run || viaApi)) {
    out(commandHelp(command));
    return 0;
  }
  if (parsed.values.help || !command) {
    out(USAGE);
    return parsed.values.help ? 0 : 2;
  }
  if (viaApi) return runApiCommand(command, args, parsed.values, env, out, err);
  if (!run) {
    const guess = closest(command, Object.keys(COMMAND_HELP));
    err(`scaffolderctl: unknown command ${command}${guess ? `; did you mean ${guess}?` : ''}\n${USAGE}\n`);
    return 2;
  }
  let config: AppConfig;
  try {
    config = loadConfig(env, { requireApiKey: false });
  } catch (e) {
    err(`scaffolderctl: ${(e as Error).message}\n`);
    return 2;
  }
  let app: INestApplicationContext | undefined;
  let ds: DataSource | undefined;
  try {
    // Quiet by default: the output is the command's; LOG_LEVEL=debug shows the framework's lines.
    const logger = makeLogger(env.LOG_LEVEL ? config.logLevel : 'warn');
    app = await NestFactory.createApplicationContext(CtlModule.forRoot(config, logger), {
      bufferLogs: true,
      abortOnError: false,
    });
    app.useLogger(app.get(NestPinoLogger));
    const store = app.get(JetStreamEventStore);
    const db = async () => {
      if (!ds) {
        ds = makeDataSource({ url: config.databaseUrl, sslCaFile: config.databaseSslCa });
        await ds.initialize();
      }
      return ds;
    };
    await run({ store, db, out, json: Boolean(parsed.values.json) }, args, parsed.values);
    return 0;
  } catch (e) {
    err(`scaffolderctl: ${(e as Error).message}\n`);
    return e instanceof CtlError ? 2 : 1;
  } finally {
    await ds?.destroy().catch(() => undefined);
    await app?.close().catch(() => undefined);
  }
}

// void: main() reports its own errors and resolves to the exit code.
if (require.main === module) void main(process.argv.slice(2)).then((code) => process.exit(code));
