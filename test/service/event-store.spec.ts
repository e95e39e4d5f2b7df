import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { JetStreamEventStore, serverAtLeast, StreamAdmin } from '../../libs/event-store/src';
import { eventStoreContract } from '../support/event-store-contract';
import { TestNats } from '../support/services';

describe('JetStream event store (real nats-server 2.9)', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let store: JetStreamEventStore;

  beforeAll(async () => {
    nats = await TestNats.start();
    nc = await connect({ servers: nats.url });
    await new StreamAdmin(nc).apply(1);
    store = await JetStreamEventStore.open(nc);
  });
  afterAll(async () => {
    await nc.close();
    await nats.destroy();
  });

  it('checks the server version', () => {
    expect(serverAtLeast(nc.info!.version)).toBe(true);
    expect(serverAtLeast('2.8.4')).toBe(false);
    expect(serverAtLeast('2.10.0')).toBe(true);
  });

  eventStoreContract(() => store);
});
