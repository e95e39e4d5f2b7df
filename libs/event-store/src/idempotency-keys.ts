import type { NatsConnection } from '@nats-io/nats-core';
import { JetStreamApiError, jetstream } from '@nats-io/jetstream';
import { DEFAULT_STREAMS, idempotencySubject, StreamNames } from './streams';
import { managerForLaterReads } from './later-reads';

/** What an Idempotency-Key stands for: the run it created and a digest of the request it came with. */
export interface IdempotencyClaim {
  runId: string;
  requestDigest: string;
}

/**
 * Idempotency-Key → run, so a run id is random even when a key is given (a derived id would let anyone
 * who knows a caller's key compute the run's subjects). `scope` identifies caller and key (a digest).
 */
export interface IdempotencyKeys {
  /** The claim recorded for `scope`, or `proposed` when there was none: of two concurrent claims one wins and both get it. */
  claim(scope: string, proposed: IdempotencyClaim): Promise<IdempotencyClaim>;
}

const WRONG_LAST_SEQUENCE = 10071;

/** A claim as stored, or null when the message is not one (only the service writes these; a reader still checks). */
function parseClaim(text: string): IdempotencyClaim | null {
  try {
    const v = JSON.parse(text) as Partial<IdempotencyClaim>;
    return typeof v?.runId === 'string' && typeof v.requestDigest === 'string'
      ? { runId: v.runId, requestDigest: v.requestDigest }
      : null;
  } catch {
    return null;
  }
}

/** Claims on the inputs stream (one message per subject, kept as long as inputs are): first writer wins through Nats-Expected-Last-Subject-Sequence 0. */
export class JetStreamIdempotencyKeys implements IdempotencyKeys {
  constructor(
    private readonly nc: NatsConnection,
    private readonly streams: StreamNames = DEFAULT_STREAMS,
  ) {}

  async claim(scope: string, proposed: IdempotencyClaim): Promise<IdempotencyClaim> {
    try {
      await jetstream(this.nc).publish(idempotencySubject(scope), JSON.stringify(proposed), {
        expect: { lastSubjectSequence: 0 },
      });
      return proposed;
    } catch (e) {
      if (!(e instanceof JetStreamApiError && e.code === WRONG_LAST_SEQUENCE)) throw e;
    }
    const jsm = await managerForLaterReads(this.nc);
    const stored = await jsm.streams.getMessage(this.streams.inputs, { last_by_subj: idempotencySubject(scope) });
    const claim = stored ? parseClaim(stored.string()) : null;
    if (!claim) throw new Error(`the Idempotency-Key record on ${idempotencySubject(scope)} cannot be read`);
    return claim;
  }
}

export class InMemoryIdempotencyKeys implements IdempotencyKeys {
  private readonly claims = new Map<string, IdempotencyClaim>();
  async claim(scope: string, proposed: IdempotencyClaim): Promise<IdempotencyClaim> {
    if (!this.claims.has(scope)) this.claims.set(scope, proposed);
    return this.claims.get(scope)!;
  }
}
