import { Injectable } from '@nestjs/common';
import { JetStreamApiError } from '@nats-io/jetstream';
import { JetStreamEventStore, StreamAdmin } from '../../libs/event-store/src';

/** The durable consumers this process pulls from (step processors, projector, Job launcher): readiness checks each. */
@Injectable()
export class OwnedConsumers {
  readonly names = new Set<string>();
  add(name: string) {
    this.names.add(name);
  }
}

const NOT_FOUND = new Set([10059, 10014]);

/**
 * What of the event log this process needs is missing: its streams and its durable consumers. A
 * missing stream is created again at once where this process owns the stream configuration (the
 * service; never the runner or scaffolderctl); a missing consumer is recreated by its processor on its
 * next pull. Either is reported until it is back.
 */
@Injectable()
export class EventLogHealth {
  constructor(
    private readonly store: JetStreamEventStore,
    private readonly consumers: OwnedConsumers,
    private readonly admin: { replicas: number; applyStreams: boolean },
  ) {}

  async missing(): Promise<string[]> {
    const jsm = this.store.jsm;
    const absent = async (lookup: () => Promise<unknown>) =>
      lookup().then(
        () => false,
        (e) => {
          if (e instanceof JetStreamApiError && NOT_FOUND.has(e.code)) return true;
          throw e;
        },
      );
    const streams = Object.values(this.store.streams);
    const missingStreams = (await Promise.all(streams.map(async (s) => ((await absent(() => jsm.streams.info(s))) ? s : null)))).filter((s): s is string => s !== null);
    if (missingStreams.length > 0 && this.admin.applyStreams) await new StreamAdmin(this.store.nc, this.store.streams).apply(this.admin.replicas);
    const missingConsumers = missingStreams.includes(this.store.streams.events)
      ? [...this.consumers.names]
      : (await Promise.all([...this.consumers.names].map(async (c) => ((await absent(() => jsm.consumers.info(this.store.streams.events, c))) ? c : null)))).filter((c): c is string => c !== null);
    return [...missingStreams.map((s) => `stream ${s}`), ...missingConsumers.map((c) => `consumer ${c}`)];
  }
}
