import type { Consumer, JetStreamClient } from '@nats-io/jetstream';
import { NoRespondersError, TimeoutError } from '@nats-io/nats-core';
import { openReader, READER_INACTIVE_MS, READER_OPEN_ATTEMPTS } from './jetstream-reads';

/** A JetStream client whose consumer creation fails with `failures` in turn, then succeeds. */
function clientFailing(failures: Error[]) {
  const consumer = { name: 'reader' } as unknown as Consumer;
  const calls: unknown[] = [];
  const js = {
    consumers: {
      get: async (_stream: string, config: unknown) => {
        calls.push(config);
        const failure = failures.shift();
        if (failure) throw failure;
        return consumer;
      },
    },
  } as unknown as JetStreamClient;
  return { js, consumer, calls };
}

describe('openReader', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('tries again while the stream elects a leader (a timeout, no responders), with the reader expiry set', async () => {
    const { js, consumer, calls } = clientFailing([new TimeoutError(), new NoRespondersError('$JS.API')]);
    const opened = openReader(js, 'events', { filter_subjects: 'x' });
    await jest.advanceTimersByTimeAsync(2000);
    await expect(opened).resolves.toBe(consumer);
    expect(calls).toEqual(Array(3).fill({ filter_subjects: 'x', inactive_threshold: READER_INACTIVE_MS }));
  });

  it(`gives up after ${READER_OPEN_ATTEMPTS} tries, with the last error`, async () => {
    const last = new TimeoutError();
    const { js, calls } = clientFailing([new TimeoutError(), new TimeoutError(), last, new TimeoutError()]);
    const opened = openReader(js, 'events', {});
    const settled = opened.catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(5000);
    expect(await settled).toBe(last);
    expect(calls).toHaveLength(READER_OPEN_ATTEMPTS);
  });

  it('fails at once on an error that is not the store being away (no such stream, no permission)', async () => {
    const refused = new Error('stream not found');
    const { js, calls } = clientFailing([refused]);
    await expect(openReader(js, 'events', {})).rejects.toBe(refused);
    expect(calls).toHaveLength(1);
  });
});
