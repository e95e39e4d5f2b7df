import {
  AckPolicy,
  Consumer,
  DeliverPolicy,
  JetStreamApiError,
  JetStreamClient,
  JetStreamManager,
} from '@nats-io/jetstream';

const CONSUMER_NOT_FOUND = 10014;

/** How a durable consumer is configured; every replica applies the same, so they converge. */
export interface DurableConsumerConfig {
  filterSubject: string;
  ackWaitMs: number;
  maxAckPending: number;
}

/** One consumer of the event stream as operators and metrics see it. */
export interface ConsumerState {
  name: string;
  /** Messages not yet delivered. */
  pending: number;
  ackPending: number;
  redelivered: number;
  ackFloorSeq: number;
  /** The stream's last sequence minus the consumer's ack floor: how far behind it is. */
  lag: number;
}

/** The event stream's own figures. */
export interface EventStreamState {
  name: string;
  messages: number;
  firstSeq: number;
  lastSeq: number;
  bytes: number;
  replicas: number;
}

/**
 * The durable consumers of the event stream: what the service's processors pull from, what readiness
 * checks and what the ops tool and metrics report. The one place outside the store that speaks
 * JetStream's consumer API, so no caller reaches for the manager itself.
 */
export class StreamConsumers {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
  ) {}

  /** A durable pull consumer, created if missing and updated (ack wait, max ack pending) if it exists. */
  async durable(name: string, config: DurableConsumerConfig): Promise<Consumer> {
    const ackWait = config.ackWaitMs * 1_000_000;
    try {
      await this.jsm.consumers.info(this.stream, name);
      await this.jsm.consumers.update(this.stream, name, { ack_wait: ackWait, max_ack_pending: config.maxAckPending });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await this.jsm.consumers
        .add(this.stream, {
          durable_name: name,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: ackWait,
          max_ack_pending: config.maxAckPending,
          filter_subject: config.filterSubject,
        })
        .catch(async (err) => {
          // Another replica created it between our info and add: use theirs.
          if (!(err instanceof JetStreamApiError)) throw err;
          await this.jsm.consumers.info(this.stream, name);
        });
    }
    return this.js.consumers.get(this.stream, name);
  }

  /** False only when the server says the consumer does not exist; other failures are thrown. */
  async exists(name: string): Promise<boolean> {
    return this.jsm.consumers.info(this.stream, name).then(
      () => true,
      (e) => {
        if (isNotFound(e)) return false;
        throw e;
      },
    );
  }

  /** Deletes a consumer; one already gone is no error. */
  async delete(name: string): Promise<void> {
    await this.jsm.consumers.delete(this.stream, name).catch(() => undefined);
  }

  /** The stream's figures and every consumer's (the listing comes in pages). */
  async states(): Promise<{ stream: EventStreamState; consumers: ConsumerState[] }> {
    const info = await this.jsm.streams.info(this.stream);
    const consumers: ConsumerState[] = [];
    for await (const c of this.jsm.consumers.list(this.stream)) {
      consumers.push({
        name: c.name,
        pending: c.num_pending,
        ackPending: c.num_ack_pending,
        redelivered: c.num_redelivered,
        ackFloorSeq: c.ack_floor.stream_seq,
        lag: info.state.last_seq - c.ack_floor.stream_seq,
      });
    }
    const { state, config } = info;
    return {
      stream: {
        name: config.name,
        messages: state.messages,
        firstSeq: state.first_seq,
        lastSeq: state.last_seq,
        bytes: state.bytes,
        replicas: config.num_replicas,
      },
      consumers,
    };
  }
}

export const isNotFound = (e: unknown) => e instanceof JetStreamApiError && e.code === CONSUMER_NOT_FOUND;
