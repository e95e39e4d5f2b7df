import type { Msg } from '@nats-io/nats-core';
import { NatsOptions, ServerNats } from '@nestjs/microservices';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { replyAllowed } from '../config/reply-subjects';

/** A request dropped because its reply subject is not a caller inbox: what to log and count (never the body). */
export interface RefusedReply {
  /** The registered pattern the request came in on (scaffolds.v1.get, ...): a bounded set, fit for a metric label. */
  pattern: string;
  subject: string;
  reply: string;
}

/**
 * The NATS transport of @nestjs/microservices that answers only the callers' inboxes (replyAllowed).
 *
 * ServerNats.handleMessage is the one path to msg.respond: it builds the publisher for the answer, for
 * an error answer (a handler that throws, a refused API key) and for "no handler" alike. A request
 * whose reply subject is not a caller inbox is dropped here, before it is deserialised: no handler
 * runs and nothing is published. (Treating it as an event instead would still run the handler.)
 */
export class InboxOnlyServerNats extends ServerNats {
  constructor(
    options: Required<NatsOptions>['options'],
    private readonly replyPrefixes: readonly string[],
    private readonly onRefused: (refused: RefusedReply) => void,
  ) {
    super(options);
  }

  override async handleMessage(channel: string, natsMsg: Msg): Promise<unknown> {
    // An empty reply is no reply: Nest handles the message as an event and answers nothing.
    if (natsMsg.reply && !replyAllowed(natsMsg.reply, this.replyPrefixes)) {
      this.onRefused({ pattern: channel, subject: natsMsg.subject, reply: natsMsg.reply });
      return;
    }
    return super.handleMessage(channel, natsMsg);
  }
}

/** What the service does with a dropped request: a warning (subjects only, never the body) and a count by request subject. */
export function logAndCount(logger: Logger, refusals: Counter<'subject'>) {
  const log = logger.child({ component: 'nats-api' });
  return ({ pattern, subject, reply }: RefusedReply) => {
    log.warn(
      { subject, reply },
      'NATS request dropped unanswered: its reply subject is not a caller inbox (NATS_REPLY_PREFIXES)',
    );
    refusals.inc({ subject: pattern });
  };
}
