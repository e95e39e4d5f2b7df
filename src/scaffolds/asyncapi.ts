import { CURRENT_VERSION, dataSchemas, EVENT_TYPES } from '#libs/events';
import { VERSION } from '#libs/cli/version';
import { ROUTES, sharedSchemas } from './openapi';

/**
 * The AsyncAPI 3.0 document of what the service serves and writes on NATS: the request/reply API on
 * scaffolds.v1.* (each subject the REST route with the same provider: its request schema, its parameters
 * as the body's fields, its answers) and the run event and run log subjects of JetStream. Built from the
 * OpenAPI route table and the event data schemas, so the two documents cannot drift; a test checks every
 * @MessagePattern subject is here and nothing else, and real replies and messages validate against it.
 */

interface RestParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: object;
  description?: string;
}
interface RestOperation {
  summary: string;
  parameters?: RestParameter[];
  requestBody?: { content: { 'application/json': { schema: object } } };
  responses: Record<string, { description: string; content?: Record<string, { schema: object }> }>;
}

/** A NATS subject of the API and the REST route whose provider call and bodies it shares. */
interface NatsOperation {
  subject: string;
  route: [method: string, path: string];
  /** The answer's body when it is not the REST one (logs: JSON over NATS, text over REST). */
  reply?: object;
  /** NATS headers read besides X-Api-Key. */
  headers?: string[];
}

export const NATS_OPERATIONS: NatsOperation[] = [
  { subject: 'scaffolds.v1.create', route: ['post', '/api/v1/scaffolds'], headers: ['Idempotency-Key'] },
  { subject: 'scaffolds.v1.preview', route: ['post', '/api/v1/scaffolds/preview'] },
  { subject: 'scaffolds.v1.get', route: ['get', '/api/v1/scaffolds/{id}'] },
  { subject: 'scaffolds.v1.list', route: ['get', '/api/v1/scaffolds'] },
  {
    subject: 'scaffolds.v1.logs',
    route: ['get', '/api/v1/scaffolds/{id}/logs'],
    reply: {
      type: 'object',
      required: ['id', 'log'],
      properties: { id: { type: 'string', format: 'uuid' }, log: { type: 'string' } },
    },
  },
  { subject: 'scaffolds.v1.events', route: ['get', '/api/v1/scaffolds/{id}/events'] },
  { subject: 'scaffolds.v1.cancel', route: ['post', '/api/v1/scaffolds/{id}/cancel'] },
  { subject: 'scaffolds.v1.redrive', route: ['post', '/api/v1/scaffolds/{id}/redrive'] },
  { subject: 'scaffolds.v1.events.all', route: ['get', '/api/v1/events'] },
  { subject: 'environments.v1.list', route: ['get', '/api/v1/environments'] },
  { subject: 'environments.v1.get', route: ['get', '/api/v1/environments/{id}'] },
];

const LOG_ENTRY = {
  type: 'object',
  required: ['time', 'level', 'step', 'msg'],
  properties: {
    time: { type: 'string', description: 'RFC 3339, stamped by the service' },
    level: { type: 'string' },
    step: { type: 'string' },
    msg: { type: 'string', description: 'redacted; control characters are shown escaped when read' },
  },
};

const restOperation = ([method, path]: [string, string]): RestOperation => {
  const found = ROUTES.find((r) => r.method === method && r.path === path);
  if (!found) throw new Error(`no REST route ${method} ${path}`);
  return found.op as RestOperation;
};

/** camelCase of a subject, as channel, operation and message ids. */
const idOf = (subject: string) => subject.replace(/[^a-zA-Z0-9]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());

/** The request body over NATS: the REST body, or the REST route's path and query parameters as fields. */
function requestPayload(op: RestOperation): object {
  if (op.requestBody) return op.requestBody.content['application/json'].schema;
  const fields = (op.parameters ?? []).filter((p) => p.in !== 'header');
  return {
    type: 'object',
    required: fields.filter((p) => p.required).map((p) => p.name),
    properties: Object.fromEntries(fields.map((p) => [p.name, p.schema])),
  };
}

const successOf = (op: RestOperation) => Object.keys(op.responses).find((code) => code.startsWith('2'))!;
const errorCodes = (op: RestOperation) => Object.keys(op.responses).filter((code) => !code.startsWith('2'));

function requestReply(n: NatsOperation) {
  const op = restOperation(n.route);
  const success = successOf(op);
  const id = idOf(n.subject);
  const headerFields: Record<string, object> = { 'X-Api-Key': { type: 'string', description: 'an API key' } };
  for (const h of n.headers ?? []) {
    const param = op.parameters?.find((p) => p.in === 'header' && p.name === h);
    headerFields[h] = param?.schema ?? { type: 'string' };
  }
  const replyHeaders = (codes: string[]) => ({
    type: 'object',
    required: ['Status-Code'],
    properties: { 'Status-Code': { enum: codes }, 'Retry-After': { type: 'string' } },
  });
  return {
    channel: {
      address: n.subject,
      description: `${op.summary} (REST: ${n.route[0].toUpperCase()} ${n.route[1]}). Queue group gitops-scaffolder.`,
      messages: {
        request: {
          name: `${id}Request`,
          contentType: 'application/json',
          headers: { type: 'object', required: ['X-Api-Key'], properties: headerFields },
          payload: requestPayload(op),
        },
      },
    },
    replies: {
      [`${id}Reply`]: {
        name: `${id}Reply`,
        summary: op.responses[success].description,
        contentType: 'application/json',
        // Every answer over NATS is 200 (the serializer's), where REST says 202 for accepted commands.
        headers: replyHeaders(['200']),
        payload: n.reply ?? op.responses[success].content?.['application/json']?.schema ?? { type: 'object' },
      },
      [`${id}Error`]: {
        name: `${id}Error`,
        summary: 'refused; the status as in REST',
        contentType: 'application/json',
        headers: replyHeaders(errorCodes(op)),
        payload: { $ref: '#/components/schemas/Error' },
      },
    },
  };
}

/** One message per event type: the stored envelope with that type's data (current schema version, the kept plans' steps). */
function eventMessages() {
  const data = dataSchemas();
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        name: type,
        contentType: 'application/json',
        payload: {
          type: 'object',
          required: ['id', 'type', 'schema_version', 'run_id', 'time', 'causation_id', 'data'],
          properties: {
            id: { type: 'string' },
            type: { const: type },
            schema_version: {
              type: 'integer',
              description: `${CURRENT_VERSION[type]} is current; older versions are raised to it on read`,
            },
            run_id: { type: 'string', format: 'uuid' },
            time: { type: 'string' },
            causation_id: { type: ['string', 'null'] },
            data: data[type],
          },
        },
      },
    ]),
  );
}

export function asyncApiDocument(): object {
  const channels: Record<string, object> = {};
  const operations: Record<string, object> = {};
  const inboxMessages: Record<string, object> = {};
  for (const n of NATS_OPERATIONS) {
    const id = idOf(n.subject);
    const { channel, replies } = requestReply(n);
    channels[id] = channel;
    Object.assign(inboxMessages, replies);
    operations[id] = {
      action: 'receive',
      channel: { $ref: `#/channels/${id}` },
      messages: [{ $ref: `#/channels/${id}/messages/request` }],
      reply: {
        channel: { $ref: '#/channels/callerInbox' },
        messages: Object.keys(replies).map((m) => ({ $ref: `#/channels/callerInbox/messages/${m}` })),
      },
    };
  }
  channels.callerInbox = {
    address: null,
    description:
      "The request's reply subject: answered only when it is a caller inbox (NATS_REPLY_PREFIXES), else dropped",
    messages: inboxMessages,
  };
  const runId = { description: 'the run id (a UUID)' };
  channels.runEvents = {
    address: 'scaffold.run.{runId}',
    description:
      "A run's events in the SCAFFOLD_EVENTS stream, in order; appended only by the service (expected last subject sequence, message id = event id)",
    parameters: { runId },
    messages: eventMessages(),
  };
  channels.runLog = {
    address: 'scaffold.logs.{runId}',
    description: "A run's log lines in the SCAFFOLD_LOGS stream (kept 30 days)",
    parameters: { runId },
    messages: { logEntry: { name: 'RunLogEntry', contentType: 'application/json', payload: LOG_ENTRY } },
  };
  operations.appendEvents = {
    action: 'send',
    channel: { $ref: '#/channels/runEvents' },
    messages: EVENT_TYPES.map((type) => ({ $ref: `#/channels/runEvents/messages/${type}` })),
  };
  operations.appendLog = {
    action: 'send',
    channel: { $ref: '#/channels/runLog' },
    messages: [{ $ref: '#/channels/runLog/messages/logEntry' }],
  };
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'GitOps Scaffolder (NATS)',
      version: VERSION,
      description:
        'The request/reply API on scaffolds.v1.* (plain JSON bodies, the API key in the X-Api-Key header, the status in the Status-Code header of the reply) and the JetStream subjects of run events and logs. The REST API: /api/v1/openapi.json.',
    },
    defaultContentType: 'application/json',
    servers: {
      nats: {
        host: '{host}',
        protocol: 'nats',
        description: "The service's NATS_URL",
        variables: { host: { default: 'nats.kubeopera-core.svc:4222' } },
      },
    },
    channels,
    operations,
    components: { schemas: sharedSchemas() },
  };
}
