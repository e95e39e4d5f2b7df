import { randomUUID } from 'node:crypto';
import type { DecideOptions, DecisionResult, RunInputs, RunLogEntry, RunLogStore } from '#libs/event-store';
import type { StoredEvent } from '#libs/events';
import { Command, fold, RunCommandPort, RunState } from '#libs/run-decider';
import { RUNNER_API_PREFIX } from '../runner-api/contract';

/** A refusal of the runner API (4xx): retrying the same request cannot help. `code` is the API's error code. */
export class RunnerApiRefusal extends Error {
  readonly retryable = false;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`the service refused: ${message} (${status} ${code})`);
  }
}

export interface RunnerApiSettings {
  /** The service as Jobs reach it (SCAFFOLDER_URL). */
  baseUrl: string;
  runId: string;
  /** The run's credential (RUNNER_TOKEN_FILE). */
  token: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
  /** How long a request is retried while the service cannot be reached or answers 5xx (default 5 min). */
  retryForMs?: number;
  /**
   * For this long after the client starts, a 403 `forbidden` is retried too: a relaunch by another replica can
   * record the Job's credential a moment after the pod has started (default 30 s).
   */
  startupGraceMs?: number;
  /** Told of each failed attempt that will be retried (for the runner's log). */
  onRetry?: (what: string, error: string, attempt: number) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The runner's side of the runner API (version 1): the run's events, commands, inputs and log through
 * the service, which decides and appends. A request that could not be answered (network, 5xx, 429) is
 * sent again, unchanged, with backoff: a report carries its report id, so the service appends it once.
 * Redirects are refused (the credential goes to the configured service only).
 */
export class RunnerApiClient {
  private readonly base: string;
  private readonly startedAt = Date.now();

  constructor(private readonly settings: RunnerApiSettings) {
    this.base = `${settings.baseUrl.replace(/\/+$/, '')}/${RUNNER_API_PREFIX}/${settings.runId}`;
  }

  events(): Promise<StoredEvent[]> {
    return this.call<{ items: StoredEvent[] }>('GET', '/events').then((r) => r.items);
  }

  /** The run's commands, decided by the service: a report id per command, kept across its retries. */
  readonly commands: RunCommandPort = {
    handle: async (runId: string, command: Command, opts: DecideOptions = {}): Promise<DecisionResult<RunState>> => {
      this.ownRun(runId);
      const answer = await this.call<{ appended: StoredEvent[]; history: StoredEvent[] }>('POST', '/commands', {
        report_id: randomUUID(),
        causation_id: opts.causationId ?? null,
        ...(opts.seenSeq !== undefined ? { seen_seq: opts.seenSeq } : {}),
        command,
      });
      return { ...answer, state: fold([...answer.history, ...answer.appended]) };
    },
  };

  readonly inputs: RunInputs = {
    get: async (runId, name) => {
      this.ownRun(runId);
      return (await this.call<{ value: string | null }>('GET', `/inputs/${encodeURIComponent(name)}`)).value;
    },
    put: async (runId, name, value) => {
      this.ownRun(runId);
      await this.call('PUT', `/inputs/${encodeURIComponent(name)}`, { value });
    },
  };

  readonly logs: RunLogStore = {
    append: async (runId: string, entry: RunLogEntry) => {
      this.ownRun(runId);
      await this.call('POST', '/logs', { entries: [{ level: entry.level, step: entry.step, msg: entry.msg }] });
    },
    read: () => Promise.reject(new Error('a runner does not read the run log')),
  };

  private ownRun(runId: string) {
    if (runId !== this.settings.runId) throw new Error(`this runner acts for run ${this.settings.runId} only`);
  }

  /** Whether an answer may change by asking again: 5xx, 429, and a 403 `forbidden` just after the start. */
  private mayChange(refusal: RunnerApiRefusal): boolean {
    if (refusal.status >= 500 || refusal.status === 429) return true;
    const sinceStart = Date.now() - this.startedAt;
    return (
      refusal.status === 403 && refusal.code === 'forbidden' && sinceStart < (this.settings.startupGraceMs ?? 30_000)
    );
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const giveUpAt = Date.now() + (this.settings.retryForMs ?? 300_000);
    for (let attempt = 0; ; attempt++) {
      let failure: Error;
      try {
        const res = await fetch(this.base + path, {
          method,
          redirect: 'error',
          headers: {
            authorization: `Bearer ${this.settings.token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.settings.timeoutMs ?? 30_000),
        });
        const text = await res.text();
        if (res.ok) return (text ? JSON.parse(text) : undefined) as T;
        const error = parseError(text);
        failure = new RunnerApiRefusal(res.status, error.code, error.message);
      } catch (e) {
        failure = e as Error; // no answer: the network, the time-out
      }
      if (failure instanceof RunnerApiRefusal && !this.mayChange(failure)) throw failure;
      if (Date.now() >= giveUpAt) throw Object.assign(failure, { retryable: true });
      this.settings.onRetry?.(`${method} ${path}`, failure.message, attempt + 1);
      // Full jitter: runners that lost the service together do not all come back at once.
      await sleep(Math.random() * Math.min(8000, 250 * 2 ** (attempt + 1)));
    }
  }
}

function parseError(text: string): { code: string; message: string } {
  try {
    const e = JSON.parse(text)?.error;
    if (typeof e?.code === 'string' && typeof e?.message === 'string') return e;
  } catch {
    // not JSON: a proxy's page
  }
  return { code: 'unknown', message: text.slice(0, 200) || 'no answer' };
}
