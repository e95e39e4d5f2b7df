import { headers as natsHeaders, MsgHdrs } from '@nats-io/nats-core';
import type { Serializer } from '@nestjs/microservices';
import { errorBody, toApiError } from './api-error';

/** A failed NATS request as the exception filter hands it to the serializer: its status and error body. */
export class RpcReply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly retryAfterSeconds?: number,
  ) {}
}

interface OutgoingPacket {
  response?: unknown;
  err?: unknown;
}

/**
 * Replies as plain JSON with a Status-Code header, never Nest's {id, response, err} envelope, so a
 * Go, Python or nats CLI client reads the body as it is.
 */
export class NatsJsonSerializer implements Serializer<OutgoingPacket, { data: string; headers: MsgHdrs }> {
  serialize(packet: OutgoingPacket): { data: string; headers: MsgHdrs } {
    let status = 200;
    let body = packet.response;
    let retryAfter: number | undefined;
    if (packet.err !== undefined) {
      const reply =
        packet.err instanceof RpcReply
          ? packet.err
          : new RpcReply(
              toApiError(packet.err).status,
              errorBody(toApiError(packet.err)),
              toApiError(packet.err).retryAfterSeconds,
            );
      status = reply.status;
      body = reply.body;
      retryAfter = reply.retryAfterSeconds;
    }
    const headers = natsHeaders();
    headers.set('Status-Code', String(status));
    if (retryAfter !== undefined) headers.set('Retry-After', String(retryAfter));
    return { data: JSON.stringify(body ?? null), headers };
  }
}
