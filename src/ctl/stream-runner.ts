/**
 * How scaffolderctl runs a stream command: one NATS connection and the event store on it, and the read-model only
 * for the commands that use it. No framework: the service's modules (NestJS, its logger, TypeORM) took most of a
 * second to load, for a command that reads a few messages (#49).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { UsageError } from '#libs/cli';
import { JetStreamEventStore } from '#libs/event-store';
import { DEFAULT_NATS_URL, type NatsSettings, natsSettings } from '../config/nats-settings';
import { SettingError } from '../config/setting-files';
import { openNatsConnection } from '../event-store/nats-client';
import { EXIT } from './api-commands';
import type { CtlReadModel } from './read-model';
import { STREAM_COMMANDS } from './stream-commands';

/** A stream command on a connection of its own, closed when it is done; its exit code. */
export async function runStreamCommand(
  name: string,
  args: string[],
  values: Record<string, any>,
  env: NodeJS.ProcessEnv,
  { out, err }: { out: (line: string) => void; err: (text: string) => void },
): Promise<number> {
  let settings: NatsSettings;
  try {
    settings = natsSettings({ ...env, NATS_URL: env.NATS_URL || DEFAULT_NATS_URL });
  } catch (e) {
    if (!(e instanceof SettingError)) throw e;
    err(`scaffolderctl: ${e.message}\n`);
    return EXIT.usage;
  }
  let nc: NatsConnection | undefined;
  let readModel: CtlReadModel | undefined;
  try {
    nc = await openNatsConnection(settings, 'scaffolderctl');
    // Read only: the ops identity may not delete consumers (#28), so its readers leave theirs to expire.
    const store = await JetStreamEventStore.open(nc, undefined, { readOnly: true });
    store.onInvalid = (m) =>
      err(`scaffolderctl: skipped seq ${m.seq} on ${m.subject}, not an event of that run: ${m.reason}\n`);
    const openReadModel = async () => {
      if (!readModel) {
        const { CtlReadModel } = await import('./read-model');
        readModel = await CtlReadModel.open(env);
      }
      return readModel;
    };
    await STREAM_COMMANDS[name]({ store, readModel: openReadModel, out, json: Boolean(values.json) }, args, values);
    return 0;
  } catch (e) {
    err(`scaffolderctl: ${(e as Error).message.split('\n')[0]}\n`);
    return e instanceof UsageError ? EXIT.usage : 1;
  } finally {
    await readModel?.close().catch(() => undefined);
    // Closed, not drained: a reader has nothing of its own to flush, and draining waits on the readers'
    // subscriptions (the server expires their consumers).
    await nc?.close().catch(() => undefined);
  }
}
