import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { Logger } from 'pino';
import {
  EventStore,
  JetStreamEventStore,
  JetStreamIdempotencyKeys,
  JetStreamRunInputs,
  JetStreamRunLogStore,
  StreamAdmin,
} from '#libs/event-store';
import { compileEventValidators } from '#libs/events';
import { RunCommands } from '#libs/run-decider';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { LOGGER } from '../logging/logging.module';
import { EventConsumerHost } from './event-consumer-host';
import { EventStoreHealth, OwnedConsumers } from './event-store-health';
import { NatsClient } from './nats-client';

/** Tokens of the event log's interfaces (the JetStream classes are injectable by class too). */
export const EVENT_STORE = Symbol('EVENT_STORE');
export const RUN_LOGS = Symbol('RUN_LOGS');
export const RUN_INPUTS = Symbol('RUN_INPUTS');
export const IDEMPOTENCY_KEYS = Symbol('IDEMPOTENCY_KEYS');

export interface EventLogOptions {
  /** NATS client name (shows in the server's connection list). */
  clientName: string;
  /** Only the service applies the stream configuration (STREAM_REPLICAS); the runner and scaffolderctl never do. */
  applyStreams: boolean;
  /** scaffolderctl: the ops identity only reads (#28); its readers leave their consumers to expire instead of deleting them. */
  readOnly?: boolean;
}

/**
 * NATS and the event log on JetStream: the event store and the runs' commands on it, the runs' logs and
 * inputs, Idempotency-Key claims, and the host that runs every @ConsumesEvents() provider's consumers.
 */
@Global()
@Module({})
export class EventStoreModule {
  static forRoot(options: EventLogOptions): DynamicModule {
    return {
      module: EventStoreModule,
      imports: [DiscoveryModule],
      providers: [
        {
          provide: NatsClient,
          inject: [APP_CONFIG, LOGGER],
          useFactory: (config: AppConfig, logger: Logger) =>
            NatsClient.connect(config.nats, options.clientName, logger),
        },
        {
          provide: JetStreamEventStore,
          inject: [NatsClient, APP_CONFIG, LOGGER],
          useFactory: async (nats: NatsClient, config: AppConfig, logger: Logger) => {
            if (options.applyStreams) await new StreamAdmin(nats.connection).apply(config.streamReplicas);
            compileEventValidators();
            const store = await JetStreamEventStore.open(nats.connection, undefined, { readOnly: options.readOnly });
            store.onInvalid = (m) =>
              logger.warn(m, 'skipped a message on an event subject that is not an event of that run');
            return store;
          },
        },
        { provide: EVENT_STORE, useExisting: JetStreamEventStore },
        { provide: RunCommands, inject: [EVENT_STORE], useFactory: (store: EventStore) => new RunCommands(store) },
        OwnedConsumers,
        EventConsumerHost,
        {
          provide: EventStoreHealth,
          inject: [JetStreamEventStore, OwnedConsumers, APP_CONFIG, LOGGER],
          useFactory: (store: JetStreamEventStore, consumers: OwnedConsumers, config: AppConfig, logger: Logger) =>
            new EventStoreHealth(
              store,
              consumers,
              { replicas: config.streamReplicas, applyStreams: options.applyStreams },
              logger,
            ),
        },
        {
          provide: RUN_LOGS,
          inject: [NatsClient],
          useFactory: (nats: NatsClient) => new JetStreamRunLogStore(nats.connection),
        },
        {
          provide: RUN_INPUTS,
          inject: [NatsClient],
          useFactory: (nats: NatsClient) => new JetStreamRunInputs(nats.connection),
        },
        {
          provide: IDEMPOTENCY_KEYS,
          inject: [NatsClient],
          useFactory: (nats: NatsClient) => new JetStreamIdempotencyKeys(nats.connection),
        },
      ],
      exports: [
        NatsClient,
        JetStreamEventStore,
        EVENT_STORE,
        RunCommands,
        RUN_LOGS,
        RUN_INPUTS,
        IDEMPOTENCY_KEYS,
        OwnedConsumers,
        EventStoreHealth,
        EventConsumerHost,
      ],
    };
  }
}
