/**
 * The commands that speak the service's REST API (#30): create, preview, get, list, logs, cancel,
 * redrive. They need no NATS and no database, only SCAFFOLDER_URL and an API key, and see what the
 * key may see (another key's run is a 404, as in the API).
 */
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from '#libs/cli';
// The one file each: the libraries' indexes load the event schemas (ajv), NATS and YAML, which no API command needs.
import { isRunId } from '#libs/events/run-id';
import { ApiClient, ApiRefusal, apiTarget, Unreachable } from './api-client';
import { environmentTable, environmentText, progressLine, runTable, runText } from './run-text';

/** Exit codes of a command that waits for a run: the run's outcome (documented in docs/cli.md). */
export const EXIT = { succeeded: 0, refused: 1, usage: 2, failed: 3, cancelled: 4, timeout: 5 } as const;

/** The API's own limit for a request body: a bigger file is refused here, not sent. */
const MAX_REQUEST_BYTES = 1024 * 1024;
/** How often `logs -f` asks for the log while the run goes on. */
const LOG_POLL_MS = 1000;
/** How often a run's events are asked for when the service has no event stream to spare. */
const POLL_MS = 2000;
/** How often a broken event stream is opened again before giving up. */
const STREAM_RETRIES = 5;

const TERMINAL_EVENTS: Record<string, 'succeeded' | 'failed' | 'cancelled'> = {
  ScaffoldSucceeded: 'succeeded',
  ScaffoldFailed: 'failed',
  ScaffoldCancelled: 'cancelled',
};
const TERMINAL_STATUSES = new Set(['succeeded', 'failed', 'cancelled']);

export interface ApiCommandContext {
  client: ApiClient;
  opts: Record<string, any>;
  out: (line: string) => void;
  err: (text: string) => void;
  /** Stops a command that follows a run (Ctrl-C); the tests abort it themselves. */
  signal?: AbortSignal;
}

/** A run id argument: present and a UUID, or a usage error that says so. */
export function runIdArgument(command: string, runId: string | undefined): string {
  if (!runId) throw new UsageError(`${command} needs a run id`);
  if (!isRunId(runId))
    throw new UsageError(`"${runId}" is not a run id (run ids are UUIDs, e.g. 6f1c2a7e-0b5d-4e8a-9c3f-2d7b8a1e4f60)`);
  return runId;
}

/** Standard input up to `limit` bytes (a request piped in), or a UsageError past it. */
export async function readStdin(limit = MAX_REQUEST_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new UsageError('the request on stdin is larger than the API takes (1 MiB)');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The request body of -f FILE (or - for stdin): JSON of at most 1 MiB, sent as written. */
async function requestFile(command: string, file: string | undefined, stdin: () => Promise<string>): Promise<string> {
  if (!file) throw new UsageError(`${command} needs the request: -f FILE (JSON, as the API takes it; - reads stdin)`);
  let text: string;
  try {
    if (file !== '-' && statSync(file).size > MAX_REQUEST_BYTES)
      throw new UsageError(`${file} is larger than the API takes (1 MiB)`);
    text = file === '-' ? await stdin() : readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const source = file === '-' ? 'the request on stdin' : file;
  if (Buffer.byteLength(text) > MAX_REQUEST_BYTES)
    throw new UsageError(`${source} is larger than the API takes (1 MiB)`);
  try {
    JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${source} is not JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  return text;
}

const runPath = (id: string, rest = '') => `/api/v1/scaffolds/${encodeURIComponent(id)}${rest}`;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** A stored event of a run, as the API's event routes give it. */
interface RunEvent {
  seq: number;
  type: string;
  time?: string;
  data: unknown;
}

/** One look at a run's events (GET …/events), those after `afterSeq`. */
async function* polledEvents(ctx: ApiCommandContext, id: string, afterSeq: number): AsyncGenerator<RunEvent> {
  const page = await ctx.client.json('follow', 'GET', runPath(id, '/events'));
  for (const e of page.items as RunEvent[]) if (e.seq > afterSeq) yield e;
}

/**
 * A run's events as they are appended: the service's Server-Sent Events, resumed with Last-Event-ID when
 * it ends a stream (SSE_MAX_SECONDS) or the connection breaks (a few tries); asked for every few seconds
 * instead when the service has no stream to spare (429 too_many_streams). Ends only when aborted.
 */
async function* runEvents(ctx: ApiCommandContext, id: string, signal?: AbortSignal): AsyncGenerator<RunEvent> {
  let lastSeq = 0;
  let failures = 0;
  let polling = false;
  while (!signal?.aborted) {
    let received = false;
    try {
      const events = polling
        ? polledEvents(ctx, id, lastSeq)
        : ctx.client.events('follow', runPath(id, '/events/stream'), lastSeq ? String(lastSeq) : undefined, signal);
      for await (const item of events) {
        const e = (polling ? item : (item as { data: RunEvent }).data) as RunEvent;
        if (e.seq <= lastSeq) continue;
        lastSeq = e.seq;
        failures = 0;
        received = true;
        yield e;
      }
    } catch (e) {
      if (signal?.aborted) return;
      if (e instanceof ApiRefusal && e.status === 429 && !polling) {
        polling = true;
        ctx.err(`scaffolderctl: ${e.message}; asking for the run's events every ${POLL_MS / 1000} s instead\n`);
        continue;
      }
      // A refusal (404, an answer too large) is final; a broken connection is tried again a few times.
      if (!(e instanceof Unreachable) || ++failures > STREAM_RETRIES) throw e;
      await sleep(1000 * failures, signal);
      continue;
    }
    if (polling || !received) await sleep(polling ? POLL_MS : 1000, signal);
  }
}

/**
 * Follows a run until its terminal event, printing each event as it arrives; the exit code of its
 * outcome, or EXIT.timeout when `--timeout` ran out first (the run goes on).
 */
async function followRun(ctx: ApiCommandContext, id: string): Promise<number> {
  const seconds: number = ctx.opts.timeout ?? 0;
  const signals = [...(ctx.signal ? [ctx.signal] : []), ...(seconds > 0 ? [AbortSignal.timeout(seconds * 1000)] : [])];
  const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
  for await (const e of runEvents(ctx, id, signal)) {
    ctx.out(ctx.opts.json ? JSON.stringify(e) : progressLine(e));
    const outcome = TERMINAL_EVENTS[e.type];
    if (outcome) {
      if (!ctx.opts.json) ctx.out(`run ${id} ${outcome}`);
      return EXIT[outcome];
    }
  }
  const run = await ctx.client.json('get', 'GET', runPath(id));
  if (TERMINAL_STATUSES.has(run.status)) return EXIT[run.status as keyof typeof EXIT];
  ctx.err(`scaffolderctl: stopped waiting: run ${id} is still ${run.status} at ${run.step ?? '-'}\n`);
  return EXIT.timeout;
}

/** The part of a log not printed yet (a log that no longer starts with what was printed is printed whole). */
function unseen(previous: string, now: string): string {
  return now.startsWith(previous) ? now.slice(previous.length) : now;
}

const printText = (ctx: ApiCommandContext, text: string) => {
  if (text) ctx.out(text.replace(/\n$/, ''));
};

export type ApiCommand = (ctx: ApiCommandContext, args: string[], stdin: () => Promise<string>) => Promise<number>;

/** A page of a list as the API answered it (--json), or as a table, with the command that gives the next page. */
function printPage(
  ctx: ApiCommandContext,
  page: { items: unknown[]; next_cursor: string | null },
  how: { command: string; table: (items: any[]) => string[]; none: string },
): number {
  if (ctx.opts.json) ctx.out(JSON.stringify(page));
  else {
    (page.items.length ? how.table(page.items) : [how.none]).forEach((l) => ctx.out(l));
    if (page.next_cursor) ctx.err(`more: scaffolderctl ${how.command} --cursor ${page.next_cursor}\n`);
  }
  return EXIT.succeeded;
}

export const API_COMMANDS: Record<string, ApiCommand> = {
  async create(ctx, _args, stdin) {
    const body = await requestFile('create', ctx.opts.file, stdin);
    const key = ctx.opts['idempotency-key'];
    const run = await ctx.client.json('create', 'POST', '/api/v1/scaffolds', {
      body,
      headers: key ? { 'idempotency-key': key } : {},
    });
    if (!ctx.opts.wait) {
      ctx.out(ctx.opts.json ? JSON.stringify(run) : `run ${run.id} ${run.status} at ${run.step ?? '-'}`);
      return EXIT.succeeded;
    }
    if (!ctx.opts.json) ctx.out(`run ${run.id} ${run.status}; following it (Ctrl-C stops following, not the run)`);
    return followRun(ctx, run.id);
  },

  async preview(ctx, _args, stdin) {
    const body = await requestFile('preview', ctx.opts.file, stdin);
    const answer = await ctx.client.json('preview', 'POST', '/api/v1/scaffolds/preview', { body });
    if (ctx.opts.json) {
      ctx.out(JSON.stringify(answer));
      return EXIT.succeeded;
    }
    // Loaded here only: the generator's words for a summary bring YAML, which no other command needs.
    const { describeDryRun, describeRehearsal } = await import('#libs/generator/summary-text');
    printText(
      ctx,
      `${answer.pass} pass${answer.note ? ` (${answer.note})` : ''}\n` +
        describeDryRun(answer.summary, answer.changes ?? []) +
        (answer.full_pass_summary ? describeRehearsal(answer.full_pass_summary) : '') +
        (answer.strict_refusal ? `a run of this request would be refused: ${answer.strict_refusal}\n` : ''),
    );
    return EXIT.succeeded;
  },

  async get(ctx, [arg]) {
    const run = await ctx.client.json('get', 'GET', runPath(runIdArgument('get', arg)));
    ctx.out(ctx.opts.json ? JSON.stringify(run) : runText(run));
    return EXIT.succeeded;
  },

  async list(ctx) {
    const query = new URLSearchParams();
    for (const name of ['status', 'limit', 'cursor'] as const)
      if (ctx.opts[name] !== undefined) query.set(name, String(ctx.opts[name]));
    const page = await ctx.client.json('list', 'GET', `/api/v1/scaffolds${query.size ? `?${query}` : ''}`);
    return printPage(ctx, page, { command: 'list', table: runTable, none: 'no runs' });
  },

  async environments(ctx, [arg]) {
    if (arg !== undefined) {
      // Ids are 32 hex digits; anything else never reaches the service.
      if (!/^[0-9a-f]{32}$/.test(arg)) throw new UsageError(`"${arg}" is not an environment id (32 hex digits)`);
      const environment = await ctx.client.json('environment', 'GET', `/api/v1/environments/${arg}`);
      ctx.out(ctx.opts.json ? JSON.stringify(environment) : environmentText(environment));
      return EXIT.succeeded;
    }
    const query = new URLSearchParams();
    for (const [flag, name] of [
      ['cluster-name', 'cluster_name'],
      ['limit', 'limit'],
      ['cursor', 'cursor'],
    ] as const)
      if (ctx.opts[flag] !== undefined) query.set(name, String(ctx.opts[flag]));
    const page = await ctx.client.json('environments', 'GET', `/api/v1/environments${query.size ? `?${query}` : ''}`);
    return printPage(ctx, page, { command: 'environments', table: environmentTable, none: 'no environments' });
  },

  async logs(ctx, [arg]) {
    const id = runIdArgument('logs', arg);
    let printed = await ctx.client.text('logs', runPath(id, '/logs'));
    printText(ctx, printed);
    if (!ctx.opts.follow) return EXIT.succeeded;
    // The log grows while the run goes on (git's output between events too): asked for again each second.
    while (!ctx.signal?.aborted) {
      const run = await ctx.client.json('get', 'GET', runPath(id));
      const log = await ctx.client.text('logs', runPath(id, '/logs'));
      printText(ctx, unseen(printed, log));
      printed = log;
      if (TERMINAL_STATUSES.has(run.status)) return EXIT[run.status as keyof typeof EXIT];
      await sleep(LOG_POLL_MS, ctx.signal);
    }
    return EXIT.timeout;
  },

  ...Object.fromEntries(
    (['cancel', 'redrive'] as const).map((action): [string, ApiCommand] => [
      action,
      async (ctx, [arg]) => {
        const id = runIdArgument(action, arg);
        const run = await ctx.client.json(action, 'POST', runPath(id, `/${action}`));
        ctx.out(
          ctx.opts.json
            ? JSON.stringify(run)
            : `${action} of ${id} accepted: ${run?.status ?? '?'} at ${run?.step ?? '-'}`,
        );
        return EXIT.succeeded;
      },
    ]),
  ),
};

/** Runs an API command: usage errors exit 2, refusals 1 (one line each), a followed run its outcome. */
export async function runApiCommand(
  name: string,
  args: string[],
  opts: Record<string, any>,
  env: NodeJS.ProcessEnv,
  io: { out: (line: string) => void; err: (text: string) => void; stdin: () => Promise<string>; signal?: AbortSignal },
): Promise<number> {
  try {
    const client = new ApiClient(apiTarget(env, opts));
    return await API_COMMANDS[name]({ client, opts, out: io.out, err: io.err, signal: io.signal }, args, io.stdin);
  } catch (e) {
    io.err(`scaffolderctl: ${(e as Error).message}\n`);
    return e instanceof UsageError ? EXIT.usage : EXIT.refused;
  }
}
