import 'reflect-metadata';
import { Parser } from '@asyncapi/parser';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { ModulesContainer } from '@nestjs/core';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { logSubject } from '#libs/event-store';
import { DATA_SCHEMAS, EVENT_TYPES } from '#libs/events';
import { CREATE_SCHEMA } from '../../src/scaffolds/create-request';
import { ROUTES } from '../../src/scaffolds/openapi';
import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { natsApi, untilTerminal } from '../support/service';
import { bareRepo } from '../support/services';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

/** Every subject a @MessagePattern of any controller of the running app answers. */
function messagePatterns(app: { get: (token: any) => any }): string[] {
  const patterns: string[] = [];
  for (const module of (app.get(ModulesContainer) as ModulesContainer).values())
    for (const { metatype } of module.controllers.values()) {
      const proto = (metatype as any)?.prototype;
      if (!proto) continue;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const found = Reflect.getMetadata(PATTERN_METADATA, proto[name]);
        if (found) patterns.push(...found.map(String));
      }
    }
  return patterns;
}

describe('the AsyncAPI document of the NATS API and the event and log subjects', () => {
  const stack = useServiceStack();
  const cert = makeRsaCert();
  const remote = bareRepo();
  let doc: any;
  let ajv: Ajv;
  beforeAll(async () => {
    const res = await fetch(`${stack.svc.base}/api/v1/asyncapi.json`); // no API key
    expect(res.status).toBe(200);
    doc = await res.json();
    ajv = new Ajv({ strict: false });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  });

  /** The channel (request/reply) serving a subject. */
  const channelOf = (subject: string) => Object.values<any>(doc.channels).find((c) => c.address === subject);
  const replyValidator = (subject: string, kind: 'Reply' | 'Error'): ValidateFunction => {
    const id = Object.keys(doc.channels).find((k) => doc.channels[k].address === subject)!;
    return ajv.compile(doc.channels.callerInbox.messages[`${id}${kind}`].payload);
  };
  const expectValid = (validate: ValidateFunction, value: unknown) =>
    expect(validate(value) ? [] : validate.errors).toEqual([]);

  it('is a valid AsyncAPI 3.0 document (@asyncapi/parser), served without a key', async () => {
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
    // Neither errors (0) nor warnings (1); the one hint left says 3.1 exists.
    const errors = diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.path.join('.')}: ${d.message}`);
    expect(errors).toEqual([]);
    expect(document!.version()).toBe('3.0.0');
    expect(document!.operations().length).toBe(13);
    // The parser refuses what AsyncAPI 3.0 does not allow: the check above can fail.
    const broken = { ...doc, operations: { ...doc.operations, bad: { action: 'publish', channel: {} } } };
    const refused = await new Parser().parse(JSON.stringify(broken));
    expect(refused.diagnostics.filter((d) => d.severity === 0).length).toBeGreaterThan(0);
  });

  it('has a channel for every @MessagePattern subject and none for a subject nothing answers', () => {
    const patterns = messagePatterns(stack.svc.app);
    expect(patterns.length).toBeGreaterThanOrEqual(9);
    const served = Object.entries<any>(doc.operations)
      .filter(([, op]) => op.action === 'receive')
      .map(([, op]) => doc.channels[op.channel.$ref.split('/').pop()].address);
    expect(served.sort()).toEqual(patterns.sort());
  });

  it('uses the request schemas the code validates with, and the REST parameters as the query bodies', () => {
    for (const subject of ['scaffolds.v1.create', 'scaffolds.v1.preview'])
      expect(channelOf(subject).messages.request.payload).toEqual({ $ref: '#/components/schemas/CreateScaffold' });
    expect(doc.components.schemas.CreateScaffold).toEqual(CREATE_SCHEMA);
    const listParams = (ROUTES.find((r) => r.method === 'get' && r.path === '/api/v1/scaffolds')!.op as any).parameters;
    expect(Object.keys(channelOf('scaffolds.v1.list').messages.request.payload.properties)).toEqual(
      listParams.map((p: any) => p.name),
    );
    expect(channelOf('scaffolds.v1.get').messages.request.payload.required).toEqual(['id']);
    expect(channelOf('scaffolds.v1.create').messages.request.headers.properties).toHaveProperty('Idempotency-Key');
    const events = channelOf('scaffold.run.{runId}').messages;
    expect(Object.keys(events)).toEqual([...EVENT_TYPES]);
    for (const type of EVENT_TYPES) expect(events[type].payload.properties.data).toEqual(DATA_SCHEMAS[type]);
  });

  it("real NATS replies, a run's stored events and its log lines validate against it", async () => {
    const nats = await natsApi(stack.nats.url);
    try {
      const created = await nats.request('scaffolds.v1.create', createBody('asyncapi', remote.url, cert.certPem));
      expect(created.status).toBe(200);
      expectValid(replyValidator('scaffolds.v1.create', 'Reply'), created.json);
      const id = created.json.id;
      expect((await untilTerminal(stack.svc.base, id)).status).toBe('succeeded');
      for (const subject of ['scaffolds.v1.get', 'scaffolds.v1.events', 'scaffolds.v1.logs']) {
        const reply = await nats.request(subject, { id });
        expect([subject, reply.status]).toEqual([subject, 200]);
        expectValid(replyValidator(subject, 'Reply'), reply.json);
      }
      for (const subject of ['scaffolds.v1.list', 'scaffolds.v1.events.all']) {
        const reply = await nats.request(subject, { limit: 5 });
        expect([subject, reply.status]).toEqual([subject, 200]);
        expectValid(replyValidator(subject, 'Reply'), reply.json);
      }
      const refused = await nats.request('scaffolds.v1.cancel', { id });
      expect(refused.status).toBe(409);
      expectValid(replyValidator('scaffolds.v1.cancel', 'Error'), refused.json);

      // The stream's messages as they are stored (not as the API shows them).
      const { store } = stack.svc.runtime;
      const { events } = await store.readRun(id);
      const eventChannel = channelOf('scaffold.run.{runId}');
      for (const { seq, type } of events) {
        const raw = (await store.jsm.streams.getMessage(store.streams.events, { seq }))!.json();
        expectValid(ajv.compile(eventChannel.messages[type].payload), raw);
      }
      const lastLine = (await store.jsm.streams.getMessage(store.streams.logs, { last_by_subj: logSubject(id) }))!;
      expectValid(ajv.compile(channelOf('scaffold.logs.{runId}').messages.logEntry.payload), lastLine.json());
    } finally {
      await nats.close();
    }
  });
});
