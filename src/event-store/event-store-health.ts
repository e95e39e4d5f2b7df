import { Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { DurableConsumerConfig, JetStreamEventStore, StreamAdmin } from '#libs/event-store';

/**
 * The durable consumers this process pulls from (step processors, projector, Job launcher), each with
 * the configuration it needs: readiness compares the server's with it.
 */
@Injectable()
export class OwnedConsumers {
  readonly expected = new Map<string, DurableConsumerConfig>();
  add(name: string, config: DurableConsumerConfig) {
    this.expected.set(name, config);
  }
  get names(): string[] {
    return [...this.expected.keys()];
  }
}

/**
 * What of the event log this process needs is missing or not as it must be: its streams and its
 * durable consumers. A missing stream is created again at once where this process owns the stream
 * configuration (the service; never the runner or scaffolderctl); a missing consumer is recreated by
 * its processor on its next pull; a consumer whose filter, deliver or ack policy differs (someone with
 * consumer rights replaced it: the steps would wait for events it never delivers) is deleted and created
 * again here. Each is reported until it is back.
 */
@Injectable()
export class EventStoreHealth {
  constructor(
    private readonly store: JetStreamEventStore,
    private readonly consumers: OwnedConsumers,
    private readonly admin: { replicas: number; applyStreams: boolean },
    private readonly logger: Logger,
  ) {}

  async missing(): Promise<string[]> {
    const missingStreams = await this.store.absentStreams();
    if (missingStreams.length > 0 && this.admin.applyStreams)
      await new StreamAdmin(this.store.nc, this.store.streams).apply(this.admin.replicas);
    const consumers = missingStreams.includes(this.store.streams.events)
      ? this.consumers.names.map((c) => `consumer ${c}`)
      : (
          await Promise.all([...this.consumers.expected].map(([name, config]) => this.consumerProblem(name, config)))
        ).flat();
    return [...missingStreams.map((s) => `stream ${s}`), ...consumers];
  }

  /** Nothing, or what is wrong with one owned consumer; a changed one is replaced before the answer. */
  private async consumerProblem(name: string, config: DurableConsumerConfig): Promise<string[]> {
    const found = await this.store.consumers.check(name, config);
    if (found === 'missing') return [`consumer ${name}`];
    if (found.length === 0) return [];
    this.logger.error(
      { consumer: name, differs: found },
      'a durable consumer was changed by someone else; creating it again',
    );
    await this.store.consumers.replace(name, config);
    return [`consumer ${name} differs: ${found.join(', ')}`];
  }
}
