import { headers as natsHeaders, MsgHdrs } from '@nats-io/nats-core';
import type { Serializer } from '@nestjs/microservices';
import { errorBody, toApiError } from './api-error';

/** A failed NATS request as the exception filter hands it to the serializer: its status and error body. */
export class RpcReply {
  constructor(
    readonly status: number,
    readonly body: unknown,
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
    if (packet.err !== undefined) {
      const reply = packet.err instanceof RpcReply ? packet.err : new RpcReply(toApiError(packet.err).status, errorBody(toApiError(packet.err)));
      status = reply.status;
      body = reply.body;
    }
    const headers = natsHeaders();
    headers.set('Status-Code', String(status));
    return { data: JSON.stringify(body ?? null), headers };
  }
}
