import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/nats-core';

/** A read of the stream that ended before the sequence the stream's leader said it holds: the store is not answering in full yet. */
export class StoreReadIncomplete extends Error {
  constructor(message: string) {
    super(`${message}: the stream did not deliver the rest (a leader election or a replica catching up); try again`);
    this.name = 'StoreReadIncomplete';
  }
}

const STORE_AWAY = [
  TimeoutError,
  NoRespondersError,
  RequestError,
  ConnectionError,
  ClosedConnectionError,
  DrainingConnectionError,
  StoreReadIncomplete,
];

/**
 * Whether `e` says the store (NATS JetStream) is out of reach for now, not that the work is wrong: a request
 * that timed out or found no responder (a stream electing its leader after a node died), a connection that is
 * closed, draining or broken. Work that meets it is tried again when the store answers; it is no failed attempt
 * of the run's (five such attempts in a few seconds of failover would otherwise fail runs nothing was wrong with).
 * An error caused by one of those is one too: the JetStream client reports a JetStream API request that found no
 * responder as `JetStreamNotEnabled` caused by the RequestError (an account without JetStream
 * is caused by the server's API error instead, and stays a failure).
 */
export function isStoreUnavailable(e: unknown): boolean {
  // The error and its causes, at most five deep (a cause chain is the thrower's to make, not bounded by the language).
  let error = e;
  for (let depth = 0; error instanceof Error && depth < 5; depth++, error = error.cause)
    if (STORE_AWAY.some((kind) => error instanceof kind)) return true;
  return false;
}
