import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { JetStreamRunInputs, JetStreamRunLogStore, StreamAdmin } from '#libs/event-store';
import { waitFor } from '../support/service';
import { TestNats } from '../support/services';

jest.setTimeout(120_000);

/**
 * The readers of inputs and logs first read while nats-server is down (a node killed, a leader
 * being elected), then after it is back. They once kept the failed first read's JetStream manager, and every later
 * read of the process failed with the same error: the cluster test's nine runs all waited at sealed-secrets-wait
 * (the first step that reads an input) until the test gave up.
 */
describe('readers of the streams whose first read met a stopped server', () => {
  let nats: TestNats;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await TestNats.start();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    await new StreamAdmin(nc).apply(1);
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.destroy();
  });

  it('read again once the server answers', async () => {
    const inputs = new JetStreamRunInputs(nc);
    const logs = new JetStreamRunLogStore(nc);
    await inputs.put('run-1', 'sealing-cert', 'PEM');
    await logs.append('run-1', { time: '2026-12-05T00:00:00.000Z', level: 'info', step: 'infra-push', msg: 'started' });

    await nats.stop('SIGKILL');
    // Each reader's first read fails: the server is gone (a timeout while the client reconnects).
    await expect(inputs.get('run-1', 'sealing-cert')).rejects.toThrow();
    await expect(logs.read('run-1')).rejects.toThrow();
    await nats.startProcess();

    // The server answers again (its store kept the messages): every reader reads, none repeats its first failure.
    const read = () => Promise.all([inputs.get('run-1', 'sealing-cert'), logs.read('run-1')]).catch(() => undefined);
    const [input, entries] = await waitFor('the readers to read after the restart', read, 60_000);
    expect(input).toBe('PEM');
    expect(entries.map((e) => e.msg)).toEqual(['started']);
  });
});
