/**
 * Every place a run's data goes, as text to scan for what must never be there: the service's three
 * JetStream streams, every table of its database, and whatever logs the caller adds.
 */
import { connect } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Client } from 'pg';

/** Every message of a stream, as text, one per line. */
export async function readWholeStream(url: string, stream: string): Promise<string> {
  const nc = await connect({ servers: url });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    const consumer = await jetstream(nc).consumers.get(stream, { deliver_policy: DeliverPolicy.All });
    const texts: string[] = [];
    while (texts.length < info.state.messages) {
      const batch = await consumer.fetch({ max_messages: 500, expires: 2000 });
      for await (const m of batch) texts.push(m.string());
    }
    return texts.join('\n');
  } finally {
    await nc.close();
  }
}

/** The streams and the tables, by name (`stream SCAFFOLD_EVENTS`, `table runs`). */
export async function dataPlaces(natsUrl: string, databaseUrl: string): Promise<Record<string, string>> {
  const places: Record<string, string> = {};
  for (const stream of ['SCAFFOLD_EVENTS', 'SCAFFOLD_LOGS', 'SCAFFOLD_INPUTS'])
    places[`stream ${stream}`] = await readWholeStream(natsUrl, stream);
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const tables = (await pg.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows.map(
      (r) => r.tablename,
    );
    for (const t of tables) places[`table ${t}`] = JSON.stringify((await pg.query(`SELECT * FROM "${t}"`)).rows);
  } finally {
    await pg.end();
  }
  return places;
}

/** Where each of `forbidden` (at least 6 characters) appears, as `place: abcd…`. */
export function hitsIn(places: Record<string, string>, forbidden: readonly string[]): string[] {
  const hits: string[] = [];
  for (const [place, text] of Object.entries(places))
    for (const secret of forbidden)
      if (secret && secret.length >= 6 && text.includes(secret)) hits.push(`${place}: ${secret.slice(0, 4)}…`);
  return hits;
}
