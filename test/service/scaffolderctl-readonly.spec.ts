import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { StreamAdmin } from '#libs/event-store';
import { main } from '../../src/ctl';
import { makeDataSource } from '../../src/projection/data-source';
import { TestDatabase, TestNats } from '../support/services';

jest.setTimeout(60_000);

/**
 * scaffolderctl never changes stream configuration: on a JetStream whose streams were set up with
 * other settings than the service's defaults (as a cluster with STREAM_REPLICAS=3 would have), its
 * commands leave every stream exactly as they found it.
 */
describe('scaffolderctl leaves the stream configuration alone', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let nc: NatsConnection;
  const ctl = async (...argv: string[]) => {
    const lines: string[] = [];
    const errors: string[] = [];
    const code = await main(
      argv,
      { NATS_URL: nats.url, DATABASE_URL: db.url, LOG_LEVEL: 'error' },
      (l) => lines.push(l),
      (t) => errors.push(t),
    );
    return { code, lines, errors };
  };
  const streamConfigs = async () => {
    const jsm = await jetstreamManager(nc);
    return Promise.all(
      ['SCAFFOLD_EVENTS', 'SCAFFOLD_LOGS', 'SCAFFOLD_INPUTS'].map(
        async (name) => (await jsm.streams.info(name)).config,
      ),
    );
  };

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    nc = await connect({ servers: nats.url });
    await new StreamAdmin(nc).apply(1);
    // Settings the service's defaults would change back: another duplicate window, age limit and description.
    const jsm = await jetstreamManager(nc);
    const events = (await jsm.streams.info('SCAFFOLD_EVENTS')).config;
    await jsm.streams.update('SCAFFOLD_EVENTS', {
      ...events,
      duplicate_window: 30 * 1e9,
      max_age: 3600 * 1e9,
      description: 'set by the operator',
    });
    const ds = makeDataSource(db.url);
    await ds.initialize();
    await ds.runMigrations();
    await ds.destroy();
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.destroy();
    await db?.drop();
  });

  it('reads without writing any stream setting', async () => {
    const before = await streamConfigs();
    expect(before[0]).toMatchObject({ duplicate_window: 30 * 1e9, description: 'set by the operator' });
    expect((await ctl('stream-info', '--json')).code).toBe(0);
    expect((await ctl('status', '--json')).code).toBe(0);
    expect((await ctl('replay', '--from-seq', '1')).code).toBe(0);
    expect((await ctl('events', '00000000-0000-4000-8000-000000000000')).code).toBe(2);
    expect(await streamConfigs()).toEqual(before);
  });

  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])('refuses %s as a command', async (command) => {
    expect((await ctl(command)).code).toBe(2);
  });

  it('prints its version', async () => {
    const { code, lines } = await ctl('--version');
    expect(code).toBe(0);
    expect(lines).toEqual([`scaffolderctl ${require('../../package.json').version}`]);
  });
});
