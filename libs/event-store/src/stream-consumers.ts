import {
  AckPolicy,
  Consumer,
  ConsumerConfig,
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

  /**
   * A durable pull consumer as the service expects it: created if missing, deleted and created again if
   * its filter, deliver or ack policy is not the expected one (someone else changed it), otherwise
   * updated (ack wait, max ack pending).
   */
  async durable(name: string, config: DurableConsumerConfig): Promise<Consumer> {
    const found = await this.check(name, config);
    if (found === 'missing') await this.create(name, config);
    else if (found.length > 0) await this.replace(name, config);
    else
      await this.jsm.consumers.update(this.stream, name, {
        ack_wait: config.ackWaitMs * 1_000_000,
        max_ack_pending: config.maxAckPending,
      });
    return this.js.consumers.get(this.stream, name);
  }

  /**
   * The stream sequence up to which the durable has delivered (0 when it does not exist): an event at or
   * below it was handed out at least once; one above it is still waiting its turn in the consumer.
   */
  async deliveredUpTo(name: string): Promise<number> {
    try {
      return (await this.jsm.consumers.info(this.stream, name)).delivered.stream_seq;
    } catch (e) {
      if (isNotFound(e)) return 0;
      throw e;
    }
  }

  /** 'missing', or what of the consumer on the server differs from what the service expects (empty: nothing). */
  async check(name: string, expected: Pick<DurableConsumerConfig, 'filterSubject'>): Promise<'missing' | string[]> {
    try {
      return consumerDifferences(name, (await this.jsm.consumers.info(this.stream, name)).config, expected);
    } catch (e) {
      if (isNotFound(e)) return 'missing';
      throw e;
    }
  }

  /**
   * Deletes a consumer whose configuration is not the expected one and creates it as it should be. It
   * starts again from the first event (handlers are idempotent): the changed one's position is not to be trusted.
   */
  async replace(name: string, config: DurableConsumerConfig): Promise<void> {
    await this.delete(name);
    await this.create(name, config);
  }

  private async create(name: string, config: DurableConsumerConfig): Promise<void> {
    await this.jsm.consumers
      .add(this.stream, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: config.ackWaitMs * 1_000_000,
        max_ack_pending: config.maxAckPending,
        filter_subject: config.filterSubject,
      })
      .catch(async (err) => {
        // Another replica created it between our info and add: use theirs.
        if (!(err instanceof JetStreamApiError)) throw err;
        await this.jsm.consumers.info(this.stream, name);
      });
  }

  /** Deletes a consumer; one already gone is no error. */
  async delete(name: string): Promise<void> {
    await this.jsm.consumers.delete(this.stream, name).catch(() => undefined);
  }

  /** The stream's figures and every durable consumer's (the listing comes in pages). */
  async states(): Promise<{ stream: EventStreamState; consumers: ConsumerState[] }> {
    const info = await this.jsm.streams.info(this.stream);
    const consumers: ConsumerState[] = [];
    for await (const c of this.jsm.consumers.list(this.stream)) {
      // Readers' ordered consumers (scaffolderctl's expire by themselves, unable to delete them) are no one's lag.
      if (!c.config.durable_name) continue;
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

/**
 * What the service relies on in a durable of its own, by the server's field names: it stays durable
 * (a named ephemeral would vanish), takes exactly its filter, every event from the first, and explicit acks.
 */
export function consumerDifferences(
  name: string,
  actual: ConsumerConfig,
  expected: Pick<DurableConsumerConfig, 'filterSubject'>,
): string[] {
  const filters = actual.filter_subjects ?? [];
  return [
    actual.durable_name === name ? [] : ['durable_name'],
    actual.filter_subject === expected.filterSubject && filters.length === 0 ? [] : ['filter_subject'],
    actual.deliver_policy === DeliverPolicy.All ? [] : ['deliver_policy'],
    actual.ack_policy === AckPolicy.Explicit ? [] : ['ack_policy'],
  ].flat();
}

export const isNotFound = (e: unknown) => e instanceof JetStreamApiError && e.code === CONSUMER_NOT_FOUND;
