import { SseParser } from './sse.js';
import type { CallerView, CredentialPlanItem, EventView, Page, RunView } from '../../common/api-shapes';

/** What the API answers (docs/api.md), in the shapes the service itself declares. */
export type { CredentialPlanItem, Page };
export type Run = RunView;
export type RunEvent = EventView;
export type Caller = CallerView;

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
/** Read once per page load: it changes only with the service's version. */
let vocabulary: Promise<{ statuses: string[]; eventTypes: string[] }> | null = null;

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

  /** The run statuses and event types, from the OpenAPI document the service builds from its own code. */
  async vocabulary(): Promise<{ statuses: string[]; eventTypes: string[] }> {
    vocabulary ??= this.json<any>('/openapi.json').then((doc) => ({
      statuses: doc.components.schemas.Run.properties.status.enum,
      eventTypes: doc.components.schemas.Event.properties.type.enum,
    }));
    return vocabulary.catch((e) => {
      vocabulary = null;
      throw e;
    });
  }

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
