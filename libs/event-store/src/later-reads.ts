import type { NatsConnection } from '@nats-io/nats-core';
import { JetStreamManager, jetstreamManager } from '@nats-io/jetstream';

/**
 * A JetStream manager for reads made later, created without asking the server anything. By default
 * jetstreamManager() first asks for the account, and a reader that kept the promise of a manager whose
 * question failed (a node killed, a leader being elected) failed every later read of the process with that
 * same error although the server answered again: every run then waited at the first step that read an input.
 */
export function managerForLaterReads(nc: NatsConnection): Promise<JetStreamManager> {
  return jetstreamManager(nc, { checkAPI: false });
}
