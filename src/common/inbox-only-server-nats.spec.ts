import { Writable } from 'node:stream';
import type { Msg } from '@nats-io/nats-core';
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { throwError } from 'rxjs';
import { InboxOnlyServerNats, logAndCount, RefusedReply } from './inbox-only-server-nats';
import { NatsJsonDeserializer } from './nats-json.deserializer';
import { NatsJsonSerializer } from './nats-json.serializer';

/** A received NATS message whose respond() records what would have been published to its reply subject. */
function message(subject: string, reply: string | undefined) {
  const body = new TextEncoder().encode('{}');
  return {
    subject,
    reply,
    data: body,
    headers: undefined,
    string: () => '{}',
    respond: jest.fn(() => true),
  } as unknown as Msg & { respond: jest.Mock };
}

/** Replies are published on a later tick (Server.send); give them the chance to happen. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('InboxOnlyServerNats: no code path publishes to a reply subject that is not a caller inbox', () => {
  let refused: RefusedReply[];
  let handled: string[];
  let server: InboxOnlyServerNats;

  beforeEach(() => {
    refused = [];
    handled = [];
    server = new InboxOnlyServerNats(
      { serializer: new NatsJsonSerializer(), deserializer: new NatsJsonDeserializer() },
      ['_INBOX_controller'],
      (r) => refused.push(r),
    );
    server.addHandler('scaffolds.v1.get', async () => (handled.push('get'), { status: 'ok' }));
    // How Nest hands a handler's exception (a 401, a 404) to the transport: an erroring stream, answered as an error reply.
    server.addHandler(
      'scaffolds.v1.create',
      async () => (handled.push('create'), throwError(() => new Error('unauthorized'))),
    );
  });

  it('answers a caller inbox: an answer and an error answer (the fake is able to see a reply)', async () => {
    const get = message('scaffolds.v1.get', '_INBOX_controller.nuid.1');
    const create = message('scaffolds.v1.create', '_INBOX_controller.nuid.2');
    await server.handleMessage('scaffolds.v1.get', get);
    await server.handleMessage('scaffolds.v1.create', create);
    await settled();
    expect(get.respond).toHaveBeenCalledTimes(1);
    expect(create.respond).toHaveBeenCalledTimes(1);
    expect(refused).toEqual([]);
  });

  it.each([
    ['$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS'],
    ['scaffold.input.run-1.sealing-cert'],
    ['scaffold.logs.run-1'],
    ['_INBOX_controllerX.1'],
    ['_INBOX_controller'],
  ])(
    'drops a request replying to %s: no answer, no error answer, no "no handler" answer, and no handler runs',
    async (reply) => {
      const messages = [
        message('scaffolds.v1.get', reply),
        message('scaffolds.v1.create', reply),
        message('scaffolds.v1.nothing', reply),
      ];
      for (const m of messages) await server.handleMessage(m.subject, m);
      await settled();
      for (const m of messages) expect(m.respond).not.toHaveBeenCalled();
      expect(handled).toEqual([]);
      expect(refused).toEqual(messages.map((m) => ({ pattern: m.subject, subject: m.subject, reply })));
    },
  );

  it('handles a message without a reply subject as before (an event: the handler runs, nothing is answered)', async () => {
    const event = message('scaffolds.v1.get', undefined);
    await server.handleMessage('scaffolds.v1.get', event);
    await settled();
    expect(handled).toEqual(['get']);
    expect(event.respond).not.toHaveBeenCalled();
    expect(refused).toEqual([]);
  });
});

describe('logAndCount: a dropped request is a warning with its subjects and a count, never its body', () => {
  it('warns with the subject and the reply subject and counts by request subject', async () => {
    const lines: any[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
    const counter = new Counter({
      name: 'refused_test_total',
      help: 'test',
      labelNames: ['subject'],
      registers: [new Registry()],
    });
    const report = logAndCount(pino({ level: 'info' }, sink), counter);
    report({ pattern: 'scaffolds.v1.get', subject: 'scaffolds.v1.get', reply: '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS' });
    report({ pattern: 'scaffolds.v1.get', subject: 'scaffolds.v1.get', reply: 'scaffold.logs.run-1' });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        component: 'nats-api',
        subject: 'scaffolds.v1.get',
        reply: '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS',
      }),
      expect.objectContaining({
        level: 40,
        component: 'nats-api',
        subject: 'scaffolds.v1.get',
        reply: 'scaffold.logs.run-1',
      }),
    ]);
    expect(Object.keys(lines[0]).sort()).toEqual([
      'component',
      'hostname',
      'level',
      'msg',
      'pid',
      'reply',
      'subject',
      'time',
    ]);
    expect((await counter.get()).values).toEqual([{ labels: { subject: 'scaffolds.v1.get' }, value: 2 }]);
  });
});
