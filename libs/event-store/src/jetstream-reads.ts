import { DeliverPolicy, JetStreamClient } from '@nats-io/jetstream';

/** Every message of one subject of a stream, oldest first, up to `untilSeq` (an ordered consumer, deleted after). */
export async function readSubject(js: JetStreamClient, stream: string, subject: string, untilSeq: number): Promise<Array<{ seq: number; subject: string; data: string }>> {
  const consumer = await js.consumers.get(stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
  const out: Array<{ seq: number; subject: string; data: string }> = [];
  try {
    for (let done = false; !done;) {
      const batch = await consumer.fetch({ max_messages: 256, expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        out.push({ seq: m.seq, subject: m.subject, data: m.string() });
        if (m.seq >= untilSeq || m.info.pending === 0) done = true;
        if (done) break;
      }
      if (got === 0) done = true;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return out;
}
