import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream } from '@nats-io/jetstream';
import { readSubject } from './jetstream-reads';
import { DEFAULT_STREAMS, logSubject, StreamNames } from './streams';
import { printableLine } from '#libs/validation';
import { managerForLaterReads } from './later-reads';

export interface RunLogEntry {
  time: string;
  level: string;
  step: string;
  msg: string;
}

const LOG_FIELDS = ['time', 'level', 'step', 'msg'] as const;

/**
 * A log-stream message as an entry, or null when it is not one (a client with publish rights wrote
 * something else): skipped like a bad event, so one stray message cannot make a run's log unreadable.
 */
export function parseLogEntry(text: string): RunLogEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const entry = value as Record<string, unknown>;
  if (!LOG_FIELDS.every((f) => typeof entry[f] === 'string')) return null;
  return {
    time: entry.time as string,
    level: entry.level as string,
    step: entry.step as string,
    msg: entry.msg as string,
  };
}

/**
 * One entry as one line of text: control characters (line breaks among them) are shown escaped, so a
 * message cannot end its line and fake the next one.
 */
export function formatLogLine(e: RunLogEntry): string {
  return `${printableLine(e.time)} ${printableLine(e.level.toUpperCase())} [${printableLine(e.step)}] ${printableLine(e.msg)}`;
}

/** The runs' log lines (not events: an age limit, no concurrency check), redacted before they get here. */
export interface RunLogStore {
  append(runId: string, entry: RunLogEntry): Promise<void>;
  read(runId: string): Promise<RunLogEntry[]>;
}

export class JetStreamRunLogStore implements RunLogStore {
  private readonly js;
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
    const jsm = await managerForLaterReads(this.nc);
    const last = await jsm.streams.getMessage(this.streams.logs, { last_by_subj: logSubject(runId) });
    if (!last) return [];
    const entries = (await readSubject(this.js, this.streams.logs, logSubject(runId), last.seq)).map((m) =>
      parseLogEntry(m.data),
    );
    return entries.filter((e): e is RunLogEntry => e !== null);
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
