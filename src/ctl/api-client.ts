/**
 * scaffolderctl's client of the service's REST API: the URL and key from options, the environment or a
 * file (never a key on the command line), no redirects (the key goes to the service named and nowhere
 * else), every answer read up to a bound, every refusal one line with the API's status and error code.
 */
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from '#libs/cli';

/** The service refused, answered something unreadable or could not be reached (exit code 1). */
export class ApiRefusal extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The service could not be reached, or the connection broke: worth another try, unlike a refusal. */
export class Unreachable extends ApiRefusal {}

/** Long enough for a busy service to append one event or run a preview, short enough not to hang a terminal. */
const API_TIMEOUT_MS = 120_000;
/** The largest answer read (a preview of a big tree is a few MiB of diff; a run log is capped by the service). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** The largest Server-Sent Event read (one run event). */
const MAX_SSE_EVENT_BYTES = 1024 * 1024;

export interface ApiTarget {
  url: string;
  key: string;
}

export interface ApiOptions {
  url?: string;
  'api-key-file'?: string;
}

/** The service's URL and API key from the options or the environment; a key is never an argument. */
export function apiTarget(env: NodeJS.ProcessEnv, opts: ApiOptions): ApiTarget {
  const url = opts.url ?? env.SCAFFOLDER_URL;
  if (!url) throw new UsageError('needs the service: --url URL or SCAFFOLDER_URL');
  if (!/^https?:\/\/[^\s/?#@]+(\/[^\s?#@]*)?$/.test(url))
    throw new UsageError('--url/SCAFFOLDER_URL must be an http(s) URL without credentials, a query or a fragment');
  // The key travels in a header: in clear only to this machine, or where the operator says the network is private.
  if (url.startsWith('http://') && !isLoopback(new URL(url).hostname) && env.SCAFFOLDER_ALLOW_HTTP !== '1')
    throw new UsageError(
      `${url} is plain HTTP to another machine: the API key would cross the network in clear; use https, or set SCAFFOLDER_ALLOW_HTTP=1 on a private network (in the cluster)`,
    );
  const keyFile = opts['api-key-file'] ?? env.SCAFFOLDER_API_KEY_FILE;
  const key = keyFile ? readKeyFile(keyFile) : env.SCAFFOLDER_API_KEY?.trim();
  if (!key)
    throw new UsageError('needs an API key: --api-key-file FILE, SCAFFOLDER_API_KEY_FILE or SCAFFOLDER_API_KEY');
  return { url: url.replace(/\/+$/, ''), key };
}

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

/** A key file readable by its owner only, as the generator's credentials file (a key is a credential). */
function readKeyFile(file: string): string {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (e) {
    throw new UsageError(`cannot read the API key file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if ((mode & 0o077) !== 0)
    throw new UsageError(`the API key file ${file} is readable or writable by group or others: chmod 600 it`);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new UsageError(`cannot read the API key file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

export interface RequestOptions {
  body?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** One Server-Sent Event of a run's stream. */
export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

export class ApiClient {
  constructor(private readonly target: ApiTarget) {}

  /** An answer as JSON; `what` names the call in a refusal ("create refused: 409 run_active: ..."). */
  async json(what: string, method: string, path: string, opts: RequestOptions = {}): Promise<any> {
    const text = await readBounded(await this.send(what, method, path, opts), what);
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiRefusal(`${what}: the service's answer is not JSON`);
    }
  }

  /** An answer as text (the run log). */
  async text(what: string, path: string): Promise<string> {
    return readBounded(await this.send(what, 'GET', path), what);
  }

  /** A run's events as the service streams them, from after `lastEventId`, until the service ends the stream. */
  async *events(what: string, path: string, lastEventId?: string, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    const res = await this.send(what, 'GET', path, {
      headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal,
      streaming: true,
    });
    try {
      yield* sseEvents(res, what);
    } catch (e) {
      if (e instanceof ApiRefusal || signal?.aborted) throw e;
      throw new Unreachable(`${what}: the event stream broke: ${oneLine((e as Error).message)}`);
    }
  }

  private async send(
    what: string,
    method: string,
    path: string,
    opts: RequestOptions & { streaming?: boolean } = {},
  ): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.target.url + path, {
        method,
        headers: {
          'x-api-key': this.target.key,
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...opts.headers,
        },
        body: opts.body,
        // No redirects: the key must reach the service named, not wherever an answer points.
        redirect: 'error',
        // A stream lasts as long as the run; a call has a deadline.
        signal: opts.streaming
          ? opts.signal
          : AbortSignal.any([AbortSignal.timeout(API_TIMEOUT_MS), ...(opts.signal ? [opts.signal] : [])]),
      });
    } catch (e) {
      if ((e as Error).name === 'AbortError' && opts.signal?.aborted) throw e;
      const cause = (e as Error & { cause?: Error }).cause;
      throw new Unreachable(
        `${this.target.url} could not be reached: ${oneLine(cause?.message ?? (e as Error).message)}`,
      );
    }
    if (res.ok) return res;
    const text = await readBounded(res, what).catch(() => '');
    const error = parseJson(text)?.error ?? {};
    throw new ApiRefusal(
      oneLine(
        `${what} refused: ${res.status} ${error.code ?? res.statusText}${error.message ? `: ${error.message}` : ''}`,
      ),
      res.status,
      error.code,
    );
  }
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').slice(0, 1000);

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The body as text, refused beyond MAX_ANSWER_BYTES (the service's answers are bounded; a proxy's need not be). */
async function readBounded(res: Response, what: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) throw new ApiRefusal(`${what}: the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Server-Sent Events (`id:`, `event:`, `data:` lines, a blank line between events), each bounded. */
async function* sseEvents(res: Response, what: string): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseSseBlock(block);
      if (event) yield event;
    }
    if (buffer.length > MAX_SSE_EVENT_BYTES)
      throw new ApiRefusal(`${what}: an event of the stream is larger than ${MAX_SSE_EVENT_BYTES} bytes`);
  }
}

function parseSseBlock(block: string): SseEvent | undefined {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue; // a comment (":keep-alive") or a bare field name
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^ /, '');
    fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
  }
  if (fields.data === undefined) return undefined;
  const data = parseJson(fields.data);
  if (data === undefined) throw new ApiRefusal('the event stream sent an event that is not JSON');
  return { id: fields.id ?? '', event: fields.event ?? 'message', data };
}
