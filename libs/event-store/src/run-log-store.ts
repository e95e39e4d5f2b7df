import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { readSubject } from './jetstream-reads';
import { DEFAULT_STREAMS, logSubject, StreamNames } from './streams';

export interface RunLogEntry {
  time: string;
  level: string;
  step: string;
  msg: string;
}

/** The runs' log lines (not events: an age limit, no concurrency check), redacted before they get here. */
export interface RunLogStore {
  append(runId: string, entry: RunLogEntry): Promise<void>;
  read(runId: string): Promise<RunLogEntry[]>;
}

export class JetStreamRunLogStore implements RunLogStore {
  private readonly js;
  /** Created on first read and reused. */
  private manager?: ReturnType<typeof jetstreamManager>;
  constructor(
    private readonly nc: NatsConnection,
    private readonly streams: StreamNames = DEFAULT_STREAMS,
  ) {
    this.js = jetstream(nc);
  }

  async append(runId: string, entry: RunLogEntry): Promise<void> {
    await this.js.publish(logSubject(runId), JSON.stringify(entry));
  }

  async read(runId: string): Promise<RunLogEntry[]> {
    const jsm = await (this.manager ??= jetstreamManager(this.nc));
    const last = await jsm.streams.getMessage(this.streams.logs, { last_by_subj: logSubject(runId) });
    if (!last) return [];
    return (await readSubject(this.js, this.streams.logs, logSubject(runId), last.seq)).map((m) => JSON.parse(m.data));
  }
}

export class InMemoryRunLogStore implements RunLogStore {
  private readonly lines = new Map<string, RunLogEntry[]>();
  async append(runId: string, entry: RunLogEntry): Promise<void> {
    this.lines.set(runId, [...(this.lines.get(runId) ?? []), entry]);
  }
  async read(runId: string): Promise<RunLogEntry[]> {
    return this.lines.get(runId) ?? [];
  }
}
