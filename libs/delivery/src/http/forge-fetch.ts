/**
 * The one way an adapter's client (octokit, gitbeaker, gitea-js) reaches its forge: a `fetch` that holds the
 * service's egress rules for HTTP as libs/git's egress.ts holds them for git. Only the API's own origin (so a
 * Link header or a client's absolute URL cannot carry the token elsewhere), https only (plain http on loopback
 * alone, for local servers), never a redirect (a 3xx is an error naming the host, never the Location), one
 * deadline per call, a bounded answer. The token is added here, so the clients never hold it and none of their
 * errors can print it; every answer of 400 or more becomes a ForgeError before a client sees it.
 */
import { Agent as HttpAgent, IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { ForgeError, ForgeKind } from '../port/forge-port';
import { answerError } from './forge-answers';
import { redact } from './redact';

/** The token, read when a call is made (a mounted Secret may be rotated under a running service). */
export type TokenSource = () => string;

/** How one forge's API is reached: where, with which token, trusting what, within which bounds. */
export interface ForgeConnection {
  /** The API's base URL (https://api.github.com, https://gitlab.example/api/v4, https://gitea.example/api/v1). */
  apiUrl: string;
  token: TokenSource;
  /** CA certificates (PEM) trusted for the API's TLS on top of the system's (FORGE_CA_FILE). */
  caPem?: string;
  /** How long one call may take, answer included (default 30 s). */
  timeoutMs?: number;
  /** The largest answer read (default 8 MiB): a list page of 100 requests with long bodies stays well below. */
  maxResponseBytes?: number;
  /** One line per call (method, path, status, duration): never a header, body or token. */
  log?: (line: string) => void;
}

export const DEFAULT_FORGE_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_FORGE_RESPONSE_BYTES = 8 * 1024 * 1024;

/** The fetch the clients are given. */
export type ForgeFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** How a forge wants its token sent (GitHub Bearer, GitLab PRIVATE-TOKEN, Gitea `token`). */
export type AuthHeader = (token: string) => [name: string, value: string];

/** Headers a client might set from its own configuration: never sent, the token is set here only. */
const CLIENT_AUTH_HEADERS = ['authorization', 'private-token', 'job-token', 'sudo'];

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** The API's base URL, refused unless https (or http on loopback) with no credentials, query or fragment. */
export function apiBaseUrl(kind: ForgeKind, apiUrl: string): URL {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new ForgeError(`${kind} API URL ${JSON.stringify(apiUrl.slice(0, 100))} is not a URL`);
  }
  const plainLoopback = url.protocol === 'http:' && LOOPBACK.test(url.hostname);
  if (url.protocol !== 'https:' && !plainLoopback)
    throw new ForgeError(`${kind} API URL must be https:// (plain http only on loopback), not ${url.protocol}//`);
  if (url.username || url.password || url.search || url.hash)
    throw new ForgeError(
      `${kind} API URL must carry no user information, query or fragment (the token comes from a file)`,
    );
  return url;
}

/** The API URL as adapters compare it: as given, without trailing "/". */
export const sameApi = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

interface Outgoing {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A fetch for one forge's API under the rules above. */
export function forgeFetch(kind: ForgeKind, connection: ForgeConnection, auth: AuthHeader): ForgeFetch {
  const base = apiBaseUrl(kind, connection.apiUrl);
  const limits = {
    timeoutMs: connection.timeoutMs ?? DEFAULT_FORGE_TIMEOUT_MS,
    maxBytes: connection.maxResponseBytes ?? DEFAULT_MAX_FORGE_RESPONSE_BYTES,
  };
  const agent =
    base.protocol === 'https:'
      ? new HttpsAgent({ keepAlive: true, ca: connection.caPem ? [...rootCertificates, connection.caPem] : undefined })
      : new HttpAgent({ keepAlive: true });
  return async (input, init) => {
    const call = await outgoing(input, init);
    if (call.url.origin !== base.origin)
      throw new ForgeError(`${kind}: refused a call to ${call.url.host}, which is not the API's host ${base.host}`);
    const token = connection.token();
    const [name, value] = auth(token);
    call.headers[name] = value;
    const started = Date.now();
    const answer = await send(kind, call, agent, limits, init?.signal ?? undefined);
    connection.log?.(
      redact(`${kind} ${call.method} ${call.url.pathname} ${answer.status} ${Date.now() - started}ms`, token),
    );
    if (answer.status >= 300 && answer.status < 400)
      throw new ForgeError(
        `${kind} API at ${call.url.host} answered ${call.method} ${call.url.pathname} with a redirect (${answer.status}), which is not followed: set the API URL the forge serves`,
        answer.status,
      );
    if (answer.status >= 400) throw answerError(kind, call.method, call.url.pathname, answer, token);
    return asResponse(answer);
  };
}

/** The call a client made, whichever way it spelled it (a Request, or a URL and its options). */
async function outgoing(input: string | URL | Request, init: RequestInit = {}): Promise<Outgoing> {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : input.toString());
  const method = (init.method ?? request?.method ?? 'GET').toUpperCase();
  const headers = new Headers(init.headers ?? request?.headers);
  for (const name of CLIENT_AUTH_HEADERS) headers.delete(name);
  if (!headers.has('user-agent')) headers.set('user-agent', 'gitops-scaffolder');
  const source = init.body ?? (request && method !== 'GET' && method !== 'HEAD' ? request.body : null);
  const body = source == null ? undefined : Buffer.from(await new Response(source).arrayBuffer());
  if (body) headers.set('content-length', String(body.length));
  return { url, method, headers: Object.fromEntries(headers), body };
}

/** Whether a failed connection may work later (refused, reset, timed out) rather than never (TLS trust). */
const isTlsProblem = (code: string) => /CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_(GET|VERIFY|DECRYPT)|ALTNAME/i.test(code);

function send(
  kind: ForgeKind,
  call: Outgoing,
  agent: HttpAgent,
  limits: { timeoutMs: number; maxBytes: number },
  signal?: AbortSignal,
): Promise<Answer> {
  const where = `${kind} API at ${call.url.host}`;
  return new Promise<Answer>((resolve, reject) => {
    const requestOf = call.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = requestOf(call.url, { method: call.method, headers: call.headers, agent, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes)
          fail(
            new ForgeError(
              `${where} answered more than ${limits.maxBytes} bytes to ${call.method} ${call.url.pathname}`,
            ),
          );
        else chunks.push(chunk);
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (e) => fail(e));
    });
    const timer = setTimeout(
      () => fail(new ForgeError(`${where} gave no answer within ${limits.timeoutMs} ms`, undefined, 0)),
      limits.timeoutMs,
    );
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(e instanceof ForgeError ? e : connectionError(where, e));
    };
    req.on('error', fail);
    req.end(call.body);
  });
}

function connectionError(where: string, e: Error): ForgeError {
  const code = (e as NodeJS.ErrnoException).code ?? e.name;
  if (e.name === 'AbortError') return new ForgeError(`${where}: the call was cancelled`);
  return isTlsProblem(code)
    ? new ForgeError(`${where}: TLS refused (${code}); FORGE_CA_FILE names the CA of a private forge`)
    : new ForgeError(`${where} cannot be reached (${code})`, undefined, 0);
}

/** A fetch Response of an answer (no body for the statuses that have none). */
function asResponse(answer: Answer): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  const empty = answer.status === 204 || answer.status === 205 || answer.status === 304;
  return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers });
}
