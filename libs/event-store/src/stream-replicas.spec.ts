import type { StreamInfo } from '@nats-io/jetstream';
import { streamReplicas } from './stream-admin';

/** STREAM.INFO as servers answer it (the fields streamReplicas reads); the live cases run in test/. */
const info = (numReplicas: number, cluster?: StreamInfo['cluster']) =>
  ({ config: { name: 'S', num_replicas: numReplicas }, cluster }) as StreamInfo;
const peer = (name: string, current: boolean, offline = false) => ({ name, current, offline, active: 0, lag: 0 });

describe('streamReplicas', () => {
  it('a standalone server (no cluster section): its one copy', () => {
    expect(streamReplicas(info(1))).toEqual({ stream: 'S', configured: 1, current: 1 });
  });

  it('the leader and the followers that are current and online', () => {
    const replicas = [peer('n2', true), peer('n3', false), peer('n4', true, true)];
    expect(streamReplicas(info(4, { leader: 'n1', replicas }))).toEqual({ stream: 'S', configured: 4, current: 2 });
  });

  it('no leader: no copy serves the stream', () => {
    expect(streamReplicas(info(3, { replicas: [peer('n2', true), peer('n3', true)] })).current).toBe(0);
  });
});
