import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream } from '@nats-io/jetstream';
import { DEFAULT_STREAMS, inputSubject, StreamNames } from './streams';
import { managerForLaterReads } from './later-reads';

/** Non-event material a later step needs (the given sealing certificate): public data only, latest value per name. */
export interface RunInputs {
  put(runId: string, name: string, value: string): Promise<void>;
  get(runId: string, name: string): Promise<string | null>;
}

export class JetStreamRunInputs implements RunInputs {
  constructor(
    private readonly nc: NatsConnection,
    private readonly streams: StreamNames = DEFAULT_STREAMS,
  ) {}

  async put(runId: string, name: string, value: string): Promise<void> {
    await jetstream(this.nc).publish(inputSubject(runId, name), value);
  }

  async get(runId: string, name: string): Promise<string | null> {
    const jsm = await managerForLaterReads(this.nc);
    const m = await jsm.streams.getMessage(this.streams.inputs, { last_by_subj: inputSubject(runId, name) });
    return m ? m.string() : null;
  }
}

export class InMemoryRunInputs implements RunInputs {
  private readonly values = new Map<string, string>();
  async put(runId: string, name: string, value: string): Promise<void> {
    this.values.set(inputSubject(runId, name), value);
  }
  async get(runId: string, name: string): Promise<string | null> {
    return this.values.get(inputSubject(runId, name)) ?? null;
  }
}
