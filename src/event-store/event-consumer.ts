import { SetMetadata } from '@nestjs/common';
import type { Delivery, Disposition, ProcessorOptions } from '#libs/event-store';

/** One durable consumer of the event stream: its options and what it does with a batch. */
export interface ConsumerSpec {
  options: ProcessorOptions;
  handle(batch: Delivery[]): Promise<Disposition>;
  /** On shutdown, how long in-flight batches may finish before they are handed back to the stream (default 0). */
  shutdownGraceMs?: number;
  /** Told on shutdown, once the consumer has stopped, that what had not finished was handed back to the stream. */
  handedBack?(): Promise<void>;
}

/** A provider that reacts to events: it declares its consumers, the host runs them. */
export interface EventConsumer {
  consumers(): ConsumerSpec[];
}

export const EVENT_CONSUMER = Symbol('EVENT_CONSUMER');

/**
 * Marks a provider as an event consumer: the EventConsumerHost finds it at start (as immich finds its
 * job handlers), creates its durable consumers, starts them with the application and stops them on
 * shutdown, so the provider keeps only its handlers.
 */
export const ConsumesEvents = (): ClassDecorator => SetMetadata(EVENT_CONSUMER, true);
