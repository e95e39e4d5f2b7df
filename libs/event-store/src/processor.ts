import { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { InvalidStreamMessage, StoredEvent, tryParseEvent } from '#libs/events';
import type { DurableConsumerConfig, StreamConsumers } from './stream-consumers';

/** One event handed to a processor's handler. */
export interface Delivery {
  event: StoredEvent;
  /** 1 on first delivery; more after a nak, an ack timeout or a crash. */
  deliveryCount: number;
}

/** What happens to a delivered batch: acknowledged, or handed back to be delivered again after a delay. */
export type Disposition = { ack: true } | { nakDelayMs: number };
export const ACK: Disposition = { ack: true };
export const nakAfter = (ms: number): Disposition => ({ nakDelayMs: ms });

export interface ProcessorOptions {
  /** Durable consumer name, shared by every replica (the work is split between them). */
  durable: string;
  filterSubject: string;
  ackWaitMs: number;
  /** Batches handled at the same time (a step's concurrency; 1 where order matters). */
  concurrency: number;
  /** Events per handler call: 1 for steps, up to this many for the projector (in stream order). */
  batchSize?: number;
  maxAckPending?: number;
  /** Told (before the ack) of a message that is not a valid event; the projector records it for reports. */
  onInvalid?: (message: InvalidStreamMessage) => Promise<void>;
}

export interface ProcessorLogger {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Backoff for a handler that threw: 1 s, 2 s, 4 s ... capped at 30 s. */
export const retryDelayMs = (attempt: number) => Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1));

interface InFlight {
  messages: JsMsg[];
  settled: boolean;
  done: Promise<void>;
}

/**
 * The one consumer loop of the service (step processors, projector, Job launcher): pulls only as many
 * messages as it has free slots (a message never waits in a client buffer without keep-alives), keeps
 * in-flight messages alive with working(), acks or naks what the handler decides, naks with backoff
 * when the handler throws, acks a message that is not an event (poison) with a warning, and on stop
 * hands back (nak) what did not finish within the grace period.
 */
/**
 * A fetch that waited out its `expires` on an idle stream can end with "heartbeats missed" rather than the
 * server's 408 (the client's two-heartbeat timer and the request's expiry both fall at 5 s): the client's
 * own advice is to pull again. Not a failure worth a warning; a consumer deleted under us is still found by
 * the recovery check that follows, and a server that is gone fails the next fetch with another error.
 */
const endedByMissedHeartbeats = (e: unknown) => (e as Error)?.message === 'heartbeats missed';

export class JetStreamProcessor {
  private readonly inFlight = new Set<InFlight>();
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  private stopped = false;
  private signalStop: () => void = () => undefined;
  private readonly stopSignal = new Promise<void>((resolve) => (this.signalStop = resolve));

  constructor(
    private readonly consumers: StreamConsumers,
    private readonly opts: ProcessorOptions,
    private readonly handler: (batch: Delivery[]) => Promise<Disposition>,
    private readonly logger: ProcessorLogger,
  ) {}

  get durable() {
    return this.opts.durable;
  }

  private get batchSize() {
    return this.opts.batchSize ?? 1;
  }

  async start(): Promise<void> {
    this.loop = this.pump(await this.ensureConsumer());
  }

  /** The durable's configuration as this processor needs it (readiness compares the server's with it). */
  get consumerConfig(): DurableConsumerConfig {
    return {
      filterSubject: this.opts.filterSubject,
      ackWaitMs: this.opts.ackWaitMs,
      maxAckPending: this.opts.maxAckPending ?? Math.max(this.opts.concurrency * this.batchSize * 4, 16),
    };
  }

  private ensureConsumer(): Promise<Consumer> {
    return this.consumers.durable(this.opts.durable, this.consumerConfig);
  }

  /**
   * After a failed fetch (a deleted consumer fails the pull): a consumer someone deleted, or deleted and
   * created again with another filter or policy, is created as it should be (it starts from the first
   * event; handlers are idempotent). The same name with another filter would otherwise pull nothing of ours.
   */
  private async recovered(consumer: Consumer): Promise<Consumer> {
    const found = await this.consumers.check(this.opts.durable, this.opts).catch((): string[] => []);
    if (found !== 'missing' && found.length === 0) return consumer;
    this.logger.error(
      { consumer: this.opts.durable, differs: found === 'missing' ? undefined : found },
      found === 'missing'
        ? 'the durable consumer was deleted; creating it again'
        : 'the durable consumer was changed by someone else; creating it again as it should be',
    );
    return this.ensureConsumer().catch(() => consumer);
  }

  private async freeSlot(): Promise<void> {
    while (!this.stopped && this.inFlight.size >= this.opts.concurrency)
      await Promise.race([this.stopSignal, ...[...this.inFlight].map((f) => f.done)]);
  }

  private async pump(initial: Consumer) {
    let consumer = initial;
    while (!this.stopped) {
      await this.freeSlot();
      if (this.stopped) break;
      try {
        const messages = await consumer.fetch({
          max_messages: (this.opts.concurrency - this.inFlight.size) * this.batchSize,
          expires: 5000,
        });
        this.messages = messages;
        let batch: JsMsg[] = [];
        for await (const msg of messages) {
          batch.push(msg);
          // Hand over what has arrived: no waiting for a full batch when the stream is quiet.
          if (batch.length >= this.batchSize || messages.getPending() === 0) {
            await this.dispatch(batch);
            batch = [];
          }
        }
        if (batch.length > 0) await this.dispatch(batch);
      } catch (e) {
        if (this.stopped) break;
        if (endedByMissedHeartbeats(e)) {
          this.logger.debug({ consumer: this.opts.durable }, 'fetch ended on missed heartbeats; fetching again');
        } else {
          this.logger.warn({ err: String(e), consumer: this.opts.durable }, 'fetch failed; retrying');
          await new Promise((r) => setTimeout(r, 1000));
        }
        consumer = await this.recovered(consumer);
      }
    }
  }

  private async dispatch(messages: JsMsg[]) {
    await this.freeSlot();
    if (this.stopped) {
      messages.forEach((m) => m.nak());
      return;
    }
    const deliveries: Delivery[] = [];
    for (const msg of messages) {
      const parsed = tryParseEvent(msg.string(), msg.seq, msg.subject);
      if ('event' in parsed) {
        deliveries.push({ event: parsed.event, deliveryCount: msg.info.deliveryCount });
        continue;
      }
      // Retrying cannot turn it into an event: report it, acknowledge it and go on.
      this.logger.warn(
        { ...parsed.invalid, consumer: this.opts.durable },
        'skipping a message that is not a scaffold event',
      );
      await this.opts
        .onInvalid?.(parsed.invalid)
        .catch((e) => this.logger.error({ err: String(e), seq: msg.seq }, 'could not record a skipped message'));
      msg.ack();
    }
    const valid = messages.filter((m) => deliveries.some((d) => d.event.seq === m.seq));
    if (valid.length === 0) return;
    const flight = { messages: valid, settled: false } as InFlight;
    flight.done = this.run(flight, deliveries).finally(() => this.inFlight.delete(flight));
    this.inFlight.add(flight);
  }

  private async run(flight: InFlight, deliveries: Delivery[]) {
    const keepAlive = setInterval(
      () => flight.messages.forEach((m) => m.working()),
      Math.max(1000, Math.floor(this.opts.ackWaitMs / 3)),
    );
    let disposition: Disposition;
    try {
      disposition = await this.handler(deliveries);
    } catch (e) {
      this.logger.error({ err: String(e), consumer: this.opts.durable }, 'handler failed; the events come back');
      disposition = nakAfter(retryDelayMs(Math.max(...deliveries.map((d) => d.deliveryCount))));
    } finally {
      clearInterval(keepAlive);
    }
    this.settle(flight, disposition);
  }

  private settle(flight: InFlight, disposition: Disposition) {
    if (flight.settled) return;
    flight.settled = true;
    for (const m of flight.messages) {
      if ('ack' in disposition) m.ack();
      else m.nak(disposition.nakDelayMs);
    }
  }

  /**
   * Stops pulling; waits up to `graceMs` for in-flight work, then hands what is left back to the
   * stream (nak) so another process takes it at once instead of after the ack wait.
   */
  async stop(graceMs = 0): Promise<{ handedBack: number }> {
    this.stopped = true;
    this.signalStop();
    await this.messages?.close().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => (timer = setTimeout(r, graceMs)));
    await Promise.race([Promise.allSettled([...this.inFlight].map((f) => f.done)), grace]);
    clearTimeout(timer);
    let handedBack = 0;
    for (const flight of this.inFlight) {
      if (!flight.settled) handedBack += flight.messages.length;
      this.settle(flight, nakAfter(0));
    }
    await this.loop?.catch(() => undefined);
    return { handedBack };
  }
}
