import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/nats-core';
import { TestNats } from '../../../test/support/services';
import { isStoreUnavailable } from './store-errors';

describe('isStoreUnavailable', () => {
  let nats: TestNats;
  beforeAll(async () => (nats = await TestNats.start()));
  afterAll(() => nats.destroy());

  it('counts a JetStream API request nobody answered (the client calls it JetStreamNotEnabled) as the store away', async () => {
    const nc = await connect({ servers: nats.url });
    try {
      // An API prefix no server answers on: what a client sees while no server of the cluster serves the API.
      const jsm = await jetstreamManager(nc, { apiPrefix: 'nobody.answers', checkAPI: false });
      const failure: unknown = await jsm.streams.info('RUNS').catch((e: unknown) => e);
      expect(failure).toMatchObject({ name: 'JetStreamNotEnabled' });
      expect(isStoreUnavailable(failure)).toBe(true);
    } finally {
      await nc.close();
    }
  });

  it('does not count an account without JetStream (the server said so), nor an error with an unrelated cause', () => {
    const apiError = Object.assign(new Error('jetstream not enabled for account'), { code: 10039 });
    expect(isStoreUnavailable(new Error('jetstream not enabled for account', { cause: apiError }))).toBe(false);
    expect(isStoreUnavailable(new Error('bad tree', { cause: new SyntaxError('x') }))).toBe(false);
    expect(isStoreUnavailable(new Error('wrapped', { cause: new TimeoutError() }))).toBe(true);
  });
});
