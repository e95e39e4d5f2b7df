import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import type { Logger } from 'pino';
import { JetStreamEventStore, JetStreamProcessor } from '#libs/event-store';
import { LOGGER } from '../logging/logging.module';
import { OwnedConsumers } from './event-store-health';
import { ConsumerSpec, EVENT_CONSUMER, EventConsumer } from './event-consumer';

interface Running {
  spec: ConsumerSpec;
  processor: JetStreamProcessor;
}

/**
 * Runs every event consumer of the application: finds the providers marked @ConsumesEvents(),
 * registers their durables for readiness, starts them once the application is up, and on shutdown
 * stops pulling and gives in-flight batches their grace before handing them back to the stream.
 */
@Injectable()
export class EventConsumerHost implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private running: Running[] = [];
  private stopping?: Promise<void>;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly store: JetStreamEventStore,
    private readonly owned: OwnedConsumers,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit() {
    const specs = this.discovery
      .getProviders()
      .filter((wrapper) => wrapper.metatype && wrapper.instance && this.reflector.get(EVENT_CONSUMER, wrapper.metatype))
      .flatMap((wrapper) => (wrapper.instance as EventConsumer).consumers());
    this.running = specs.map((spec) => ({
      spec,
      processor: new JetStreamProcessor(this.store.consumers, spec.options, (batch) => spec.handle(batch), this.logger),
    }));
    for (const { processor } of this.running) this.owned.add(processor.durable, processor.consumerConfig);
  }

  async onApplicationBootstrap() {
    for (const { processor } of this.running) await processor.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return (this.stopping ??= this.stop());
  }

  private async stop() {
    const results = await Promise.all(
      this.running.map(async ({ spec, processor }) => {
        const stopped = await processor.stop(spec.shutdownGraceMs ?? 0);
        await spec.handedBack?.();
        return stopped;
      }),
    );
    const handedBack = results.reduce((n, r) => n + r.handedBack, 0);
    this.logger.info({ consumers: this.running.length, handed_back: handedBack }, 'event consumers stopped');
  }
}
