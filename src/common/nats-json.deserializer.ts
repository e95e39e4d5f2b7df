import { randomUUID } from 'node:crypto';
import type { Msg } from '@nats-io/nats-core';
import type { Deserializer, IncomingRequest } from '@nestjs/microservices';
import { ApiError } from './api-error';
import { MAX_BODY_BYTES, parseJsonBody, payloadTooLarge } from './json-body.middleware';

/** A body that cannot be handled; the admission pipe answers with its error once the caller is known. */
export class RejectedBody {
  constructor(readonly error: ApiError) {}
}

/**
 * Plain JSON in: the body is the handler's payload as it is (no {pattern, data} envelope) and the
 * subject is the pattern. A message with a reply subject is a request (it gets an id, so Nest
 * answers it); an empty body is {}. Too large or malformed bodies become a RejectedBody.
 */
export class NatsJsonDeserializer implements Deserializer<Msg, IncomingRequest | Omit<IncomingRequest, 'id'>> {
  deserialize(msg: Msg, options?: { channel?: string }): IncomingRequest | Omit<IncomingRequest, 'id'> {
    const pattern = options?.channel ?? msg.subject;
    const data = NatsJsonDeserializer.body(msg);
    return msg.reply ? { id: randomUUID(), pattern, data } : { pattern, data };
  }

  private static body(msg: Msg): unknown {
    if (msg.data.length > MAX_BODY_BYTES) return new RejectedBody(payloadTooLarge());
    if (msg.data.length === 0) return {};
    const parsed = parseJsonBody(msg.string());
    return 'error' in parsed ? new RejectedBody(parsed.error) : parsed.value;
  }
}
