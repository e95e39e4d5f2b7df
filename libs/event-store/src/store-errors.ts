import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/nats-core';

/**
 * Whether `e` says the store (NATS JetStream) is out of reach for now, not that the work is wrong: a request
 * that timed out or found no responder (a stream electing its leader after a node died), a connection that is
 * closed, draining or broken. Work that meets it is tried again when the store answers; it is no failed attempt
 * of the run's (five such attempts in a few seconds of failover would otherwise fail runs nothing was wrong with).
 */
export function isStoreUnavailable(e: unknown): boolean {
  return (
    e instanceof TimeoutError ||
    e instanceof NoRespondersError ||
    e instanceof RequestError ||
    e instanceof ConnectionError ||
    e instanceof ClosedConnectionError ||
    e instanceof DrainingConnectionError
  );
}
