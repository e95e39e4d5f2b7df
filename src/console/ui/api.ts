import { SseParser } from './sse.js';

/** What the API answers, as far as the console reads it (docs/api.md). */
export interface Run {
  id: string;
  owner: string;
  status: string;
  step: string | null;
  message: string;
  cluster_name: string;
  domain: string;
  region: string;
  gitops_path: string;
  repo_url: string;
  branch: string;
  infra_commit: string | null;
  full_commit: string | null;
  created_at: string | null;
  updated_at: string | null;
  finished_at: string | null;
  progress: { waited_seconds: number; deadline_seconds: number } | null;
  retry: { step: string; failed_attempt: number; reason: string } | null;
}

export interface RunEvent {
  seq: number;
  id: string;
  run_id?: string;
  type: string;
  time: string;
  data: Record<string, unknown>;
}

export interface Caller {
  name: string;
  role: 'admin' | 'operator' | 'reader';
}

export interface CredentialPlanItem {
  namespace: string;
  name: string;
  key: string;
  class: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** An answer other than 2xx, with the API's error code and message (never the key). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds the API asks to wait (429). */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

const API = '/api/v1';

async function failure(res: Response): Promise<ApiFailure> {
  const body = (await res.json().catch(() => undefined)) as
    { error?: { code?: unknown; message?: unknown } } | undefined;
  const retryAfter = Number(res.headers.get('retry-after'));
  return new ApiFailure(
    res.status,
    String(body?.error?.code ?? res.status),
    String(body?.error?.message ?? res.statusText),
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  );
}

/** The API with one key, sent as X-Api-Key on every call (fetch, never a URL or a cookie). */
export class ApiClient {
  constructor(private readonly key: string) {}

  private async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(API + path, {
      ...init,
      headers: { 'x-api-key': this.key, ...init.headers },
      credentials: 'omit',
      cache: 'no-store',
    });
    if (!res.ok) throw await failure(res);
    return res;
  }

  async json<T>(path: string): Promise<T> {
    return (await (await this.fetch(path, { headers: { accept: 'application/json' } })).json()) as T;
  }

  async text(path: string): Promise<string> {
    return (await this.fetch(path)).text();
  }

  whoami = () => this.json<Caller>('/whoami');
  run = (id: string) => this.json<Run>(`/scaffolds/${encodeURIComponent(id)}`);
  runLog = (id: string) => this.text(`/scaffolds/${encodeURIComponent(id)}/logs`);
  credentialPlan = (id: string) =>
    this.json<{ items: CredentialPlanItem[] }>(`/scaffolds/${encodeURIComponent(id)}/credential-plan`);
  runs = (query: URLSearchParams) => this.json<Page<Run>>(`/scaffolds?${query}`);
  audit = (query: URLSearchParams) => this.json<Page<RunEvent>>(`/events?${query}`);

  /**
   * A run's events as Server-Sent Events, read with fetch so the key travels in a header
   * (EventSource cannot send one). Resolves when the server ends the stream (after the terminal
   * event, or at its time limit), rejects on a failed answer or a broken connection.
   */
  async follow(
    id: string,
    afterSeq: number | null,
    onEvent: (e: RunEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (afterSeq !== null) headers['last-event-id'] = String(afterSeq);
    const res = await this.fetch(`/scaffolds/${encodeURIComponent(id)}/events/stream`, { headers, signal });
    if (!res.body) return;
    const parser = new SseParser((m) => onEvent(JSON.parse(m.data) as RunEvent));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return parser.end();
      parser.push(value);
    }
  }
}
