import { Injectable } from '@nestjs/common';
import { JetStreamEventStore, StreamAdmin } from '../../libs/event-store/src';

/** The durable consumers this process pulls from (step processors, projector, Job launcher): readiness checks each. */
@Injectable()
export class OwnedConsumers {
  readonly names = new Set<string>();
  add(name: string) {
    this.names.add(name);
  }
}

/**
 * What of the event log this process needs is missing: its streams and its durable consumers. A
 * missing stream is created again at once where this process owns the stream configuration (the
 * service; never the runner or scaffolderctl); a missing consumer is recreated by its processor on its
 * next pull. Either is reported until it is back.
 */
@Injectable()
export class EventStoreHealth {
  constructor(
    private readonly store: JetStreamEventStore,
    private readonly consumers: OwnedConsumers,
    private readonly admin: { replicas: number; applyStreams: boolean },
  ) {}

  async missing(): Promise<string[]> {
    const missingStreams = await this.store.absentStreams();
    if (missingStreams.length > 0 && this.admin.applyStreams)
      await new StreamAdmin(this.store.nc, this.store.streams).apply(this.admin.replicas);
    const owned = [...this.consumers.names];
    const missingConsumers = missingStreams.includes(this.store.streams.events)
      ? owned
      : (await Promise.all(owned.map(async (c) => ((await this.store.consumers.exists(c)) ? [] : [c])))).flat();
    return [...missingStreams.map((s) => `stream ${s}`), ...missingConsumers.map((c) => `consumer ${c}`)];
  }
}
