/**
 * What the three forge stand-ins (GitHub, GitLab, Gitea) share: an HTTPS server on loopback with a certificate
 * of a private test CA (the adapters are told to trust it as FORGE_CA_FILE tells the service), the requests
 * the forge holds, and the controls a test drives them with: merge or close a request as a person would, move a
 * branch's head, pre-create many requests, make the next call answer an error or a redirect, and read every
 * call received (method, path, headers, body) to scan it for tokens. Each forge's subclass speaks its REST
 * paths, JSON, authentication, pagination and error bodies.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import { makeTestTls, TestTls } from '../certs';

/** One call the stand-in received, as it came. */
export interface ReceivedCall {
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request (pull or merge request) the forge holds. */
export interface HeldRequest {
  /** Internal id (GitHub `id`, GitLab `id`, Gitea `id`). */
  id: number;
  /** The number people see (GitHub/Gitea number, GitLab iid). */
  number: number;
  repo: string;
  head: string;
  base: string;
  title: string;
  body: string;
  labels: string[];
  state: 'open' | 'closed' | 'merged';
  /** The head's commit when the request was merged or closed (later the branch may move or go). */
  finalHeadSha?: string;
  mergeCommitSha?: string;
  /** Opened from a fork (owner `fork`) rather than from a branch of the repository itself. */
  fromFork?: boolean;
  /** Auto-merge asked for, with the commit it was asked for (if any). */
  autoMerge?: { sha?: string };
  createdAt: string;
  updatedAt: string;
}

export interface HeldLabel {
  id: number;
  name: string;
  color: string;
}

/** An answer a handler gives: a status, a JSON (or text) body and headers. */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A call as a handler gets it. */
export interface Call {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  json: any;
}

/** The commit a branch of a repository points at, or undefined when there is no such branch. */
export type HeadShaOf = (repo: string, branch: string) => string | undefined;

export interface StandInOptions {
  /** Where branch heads come from (an end-to-end test reads them from a bare git repository); default: setHead's. */
  headSha?: HeadShaOf;
}

/**
 * Branch heads read from bare git repositories (an end-to-end test pushes there with the service's git): the
 * stand-in then reports the commit the branch really has, and a test's own push to it is an edit the adapter sees.
 */
export function headsOfBareRepositories(gitDirOf: (repo: string) => string | undefined): HeadShaOf {
  return (repo, branch) => {
    const gitDir = gitDirOf(repo);
    if (!gitDir) return undefined;
    try {
      return execFileSync(
        'git',
        ['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`],
        {
          encoding: 'utf8',
        },
      ).trim();
    } catch {
      return undefined; // no such branch
    }
  };
}

let sharedTls: TestTls | undefined;
/** One private CA and serving certificate per test process (openssl takes a moment). */
export function standInTls(): TestTls {
  return (sharedTls ??= makeTestTls());
}

export const randomSha = () => randomBytes(20).toString('hex');

/**
 * A forge's published schema with every field optional, at any depth: a stand-in's JSON `satisfies` it, so tsc
 * checks each field it writes (its name, and its type) against the forge's own description (octokit's types come from
 * GitHub's OpenAPI document, gitea-js's from Gitea's swagger; gitbeaker's, from GitLab's API documentation, admit any
 * further field, so there only the types of the fields they name are checked).
 */
export type SchemaPart<T> = T extends (infer E)[]
  ? SchemaPart<E>[]
  : T extends object
    ? // null too: Gitea (Go) writes an unset optional field as null, which its swagger's types leave out.
      { [K in keyof T]?: SchemaPart<T[K]> | null }
    : T;

export abstract class ForgeStandIn {
  /** The token the stand-in accepts. */
  readonly token = `forge-test-token-${randomBytes(12).toString('hex')}`;
  /** Every call received, in order. */
  readonly received: ReceivedCall[] = [];
  readonly requests: HeldRequest[] = [];
  readonly labels = new Map<string, HeldLabel[]>();
  /** Repositories the forge has (others answer 404). */
  readonly repositories = new Set<string>();
  private readonly heads = new Map<string, string>();
  private readonly queued: Answer[] = [];
  private server?: Server;
  private port = 0;
  private nextId = 1000;
  protected readonly headShaOf: HeadShaOf;

  constructor(options: StandInOptions = {}) {
    this.headShaOf = options.headSha ?? ((repo, branch) => this.heads.get(`${repo}\0${branch}`));
  }

  /** The API base URL the adapter is given. */
  abstract get apiUrl(): string;
  /** Whether a call carries the token the way this forge takes it. */
  protected abstract authenticated(call: Call): boolean;
  /** This forge's 401. */
  abstract unauthorizedAnswer(): Answer;
  /** This forge's rate-limit answer, asking for a wait of `seconds`. */
  abstract rateLimitAnswer(seconds: number): Answer;
  /** Answers a call of this forge's API (undefined: no such path, 404). */
  protected abstract route(call: Call): Answer | undefined;
  /** This forge's 404 body. */
  protected abstract notFoundBody(): unknown;

  get origin(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** The CA the adapter must trust (PEM). */
  get caPem(): string {
    return standInTls().caPem;
  }

  async start(): Promise<this> {
    const tls = standInTls();
    this.server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  // ---- controls -----------------------------------------------------------------------------------------

  /** Adds a repository (owner/name, or GitLab's group/subgroup/name). */
  repository(path: string): this {
    this.repositories.add(path);
    return this;
  }

  /** Points a branch at a commit (a push, a force-push, an edit in the forge's web editor). */
  setHead(repo: string, branch: string, sha: string = randomSha()): string {
    this.heads.set(`${repo}\0${branch}`, sha);
    return sha;
  }

  /** The next call gets this answer, whatever it asks. */
  answerNext(answer: Answer): void {
    this.queued.push(answer);
  }
  unauthorizedNext(): void {
    this.answerNext(this.unauthorizedAnswer());
  }
  rateLimitNext(seconds = 60): void {
    this.answerNext(this.rateLimitAnswer(seconds));
  }
  /** The next call is redirected to `location` (302). */
  redirectNext(location: string): void {
    this.answerNext({ status: 302, headers: { location }, body: '' });
  }

  /** Merges a request as a person would; the merge commit's sha. */
  merge(repo: string, number: number, mergeCommitSha: string = randomSha()): string {
    const held = this.held(repo, number);
    Object.assign(held, { state: 'merged', mergeCommitSha, finalHeadSha: this.currentHead(held) });
    this.touch(held);
    return mergeCommitSha;
  }

  /** Closes a request as a person would. */
  close(repo: string, number: number): void {
    const held = this.held(repo, number);
    Object.assign(held, { state: 'closed', finalHeadSha: this.currentHead(held) });
    this.touch(held);
  }

  /**
   * The checks passed: every open request with auto-merge asked is merged, when its head is still the commit
   * auto-merge was asked for (a forge merges nothing else). The numbers merged.
   */
  runScheduledMerges(repo: string): number[] {
    const due = this.requestsOf(repo).filter(
      (r) => r.state === 'open' && r.autoMerge && (!r.autoMerge.sha || r.autoMerge.sha === this.currentHead(r)),
    );
    for (const r of due) this.merge(repo, r.number);
    return due.map((r) => r.number);
  }

  /** Creates `count` requests (heads `other-<i>` unless named), as many a busy repository has. */
  precreate(
    repo: string,
    count: number,
    opts: { head?: (i: number) => string; base?: string; state?: HeldRequest['state']; fromFork?: boolean } = {},
  ): HeldRequest[] {
    return Array.from({ length: count }, (_, i) => {
      const head = opts.head?.(i) ?? `other-${i}`;
      if (!this.headShaOf(repo, head)) this.setHead(repo, head);
      const held = this.hold(repo, { head, base: opts.base ?? 'main', title: `change ${i}`, body: '' });
      if (opts.fromFork) held.fromFork = true;
      if (opts.state === 'merged') this.merge(repo, held.number);
      if (opts.state === 'closed') this.close(repo, held.number);
      return held;
    });
  }

  /** The requests of a repository, oldest first. */
  requestsOf(repo: string): HeldRequest[] {
    return this.requests.filter((r) => r.repo === repo);
  }

  /** Every call received, as one text (to scan for a token). */
  receivedText(): string {
    return JSON.stringify(this.received);
  }

  // ---- for the forges' subclasses -----------------------------------------------------------------------

  /** A new open request. */
  protected hold(repo: string, fields: Pick<HeldRequest, 'head' | 'base' | 'title' | 'body'>): HeldRequest {
    const now = new Date().toISOString();
    const number = this.requestsOf(repo).length + 1;
    const held: HeldRequest = {
      id: this.nextId++,
      number,
      repo,
      ...fields,
      labels: [],
      state: 'open',
      createdAt: now,
      updatedAt: now,
    };
    this.requests.push(held);
    return held;
  }

  protected find(repo: string, number: number): HeldRequest | undefined {
    return this.requests.find((r) => r.repo === repo && r.number === number);
  }

  private held(repo: string, number: number): HeldRequest {
    const held = this.find(repo, number);
    if (!held) throw new Error(`stand-in: ${repo} has no request ${number}`);
    return held;
  }

  protected touch(held: HeldRequest): void {
    held.updatedAt = new Date().toISOString();
  }

  /** The head's commit: the branch's now while open, the one it had when merged or closed after. */
  protected currentHead(held: HeldRequest): string {
    return held.finalHeadSha ?? this.headShaOf(held.repo, held.head) ?? '0'.repeat(40);
  }

  /** The repository's label of that name, created when missing. */
  protected label(repo: string, name: string, color = 'ededed'): HeldLabel {
    const list = this.labels.get(repo) ?? [];
    this.labels.set(repo, list);
    const found = list.find((l) => l.name === name);
    if (found) return found;
    const created = { id: this.nextId++, name, color };
    list.push(created);
    return created;
  }

  /**
   * One page of a list and the headers that lead to the others: `Link` (next, prev, first, last) with the
   * call's own query and the page changed, as all three forges send it.
   */
  protected page<T>(call: Call, items: T[], sizeParam: string, defaultSize: number, maxSize: number) {
    const size = Math.min(
      Math.max(Number(call.url.searchParams.get(sizeParam) ?? defaultSize) || defaultSize, 1),
      maxSize,
    );
    const page = Math.max(Number(call.url.searchParams.get('page') ?? 1) || 1, 1);
    const last = Math.max(Math.ceil(items.length / size), 1);
    const link = (n: number, rel: string) => {
      const url = new URL(call.url.toString(), this.origin);
      url.searchParams.set('page', String(n));
      return `<${url.toString()}>; rel="${rel}"`;
    };
    const links = [
      ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []),
      ...(page > 1 ? [link(1, 'first'), link(page - 1, 'prev')] : []),
    ];
    return {
      items: items.slice((page - 1) * size, page * size),
      page,
      size,
      last,
      headers: links.length > 0 ? { link: links.join(', ') } : ({} as Record<string, string>),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    this.received.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body });
    const call: Call = {
      method: req.method ?? 'GET',
      url: new URL(req.url ?? '/', this.origin),
      headers: req.headers,
      json: parseJson(body),
    };
    const answer = this.queued.shift() ??
      (this.authenticated(call) ? this.route(call) : this.unauthorizedAnswer()) ?? {
        status: 404,
        body: this.notFoundBody(),
      };
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? null);
    const type = typeof answer.body === 'string' ? 'text/plain' : 'application/json; charset=utf-8';
    res.writeHead(answer.status, { 'content-type': type, ...answer.headers });
    res.end(answer.status === 204 ? undefined : text);
  }
}

function parseJson(text: string): any {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The request's bearer or `token` credential from an Authorization header. */
export function authorizationToken(call: Call, schemes: readonly string[]): string | undefined {
  const value = call.headers.authorization;
  const match = typeof value === 'string' ? /^(\S+)\s+(\S+)$/.exec(value) : null;
  return match && schemes.some((s) => s.toLowerCase() === match[1].toLowerCase()) ? match[2] : undefined;
}

/** Matches a path against routes (method and pattern) and gives the handler its captured, decoded parts. */
export function routeOf(
  call: Call,
  prefix: string,
  routes: ReadonlyArray<[method: string, pattern: RegExp, handler: (...parts: string[]) => Answer | undefined]>,
): Answer | undefined {
  const rawPath = call.url.pathname;
  if (!rawPath.startsWith(prefix)) return undefined;
  const path = rawPath.slice(prefix.length);
  for (const [method, pattern, handler] of routes) {
    const match = pattern.exec(path);
    if (match && method === call.method) return handler(...match.slice(1).map((p) => decodeURIComponent(p)));
  }
  return undefined;
}
