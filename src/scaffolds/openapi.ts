import { allSteps, dataSchemas, EVENT_TYPES } from '#libs/events';
import { CREDENTIAL_CLASSES } from '#libs/generator';
import { RUN_STATUSES } from '#libs/run-decider';
import { ROLES } from '../config/api-key';
import { RUNNER_API_PREFIX } from '../runner-api/contract';
import { logSchema, reportSchema } from '../runner-api/runner-reports';
import { CREATE_SCHEMA } from './create-request';
import { VERSION } from '#libs/cli/version';

/**
 * The OpenAPI document, built from the same schemas the code validates with (the create body, the
 * event data schemas) and the route table below; a test checks every registered route is here. Its step enums are
 * the steps of the kept run plans when it is asked for (a plan deployed adds its steps).
 */
const nullable = (type: string) => ({ type: [type, 'null'] });
/** Where a run writes and an environment is: the cluster, its values, and its folder on a branch of a repository. */
const CLUSTER_FOLDER_PROPERTIES = {
  cluster_name: { type: 'string' },
  domain: { type: 'string' },
  region: { type: 'string' },
  gitops_path: { type: 'string' },
  repo_url: { type: 'string' },
  branch: { type: 'string' },
};

const runView = (steps: readonly string[]) => ({
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'owner',
    'status',
    'step',
    'message',
    'cluster_name',
    'domain',
    'region',
    'gitops_path',
    'repo_url',
    'branch',
    'infra_commit',
    'full_commit',
    'created_at',
    'updated_at',
    'finished_at',
    'progress',
    'retry',
    'delivery',
    'merge_requests',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    owner: { type: 'string', description: 'the name of the key that created the run' },
    status: { enum: [...RUN_STATUSES] },
    step: { enum: [...steps, null] },
    message: { type: 'string' },
    ...CLUSTER_FOLDER_PROPERTIES,
    infra_commit: nullable('string'),
    full_commit: nullable('string'),
    created_at: nullable('string'),
    updated_at: nullable('string'),
    finished_at: nullable('string'),
    progress: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['waited_seconds', 'deadline_seconds'],
          properties: { waited_seconds: { type: 'integer' }, deadline_seconds: { type: 'integer' } },
        },
      ],
    },
    delivery: { enum: ['push', 'merge_request'] },
    merge_requests: {
      description: 'the merge requests the run opened (merge_request delivery), with their state as last seen',
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['pass', 'number', 'url', 'head', 'base', 'state', 'edited'],
        properties: {
          pass: { enum: ['infra', 'full'] },
          number: { type: 'integer' },
          url: { type: 'string' },
          head: { type: 'string' },
          base: { type: 'string' },
          state: { enum: ['open', 'merged', 'closed'] },
          edited: { type: 'boolean' },
        },
      },
    },
    retry: {
      description: 'while status is retrying: the step, the attempt that failed and why',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['step', 'failed_attempt', 'reason'],
          properties: { step: { type: 'string' }, failed_attempt: { type: 'integer' }, reason: { type: 'string' } },
        },
      ],
    },
  },
});
const eventSchema = (data: Record<string, object>) => ({
  type: 'object',
  required: ['seq', 'id', 'type', 'schema_version', 'time', 'causation_id', 'data'],
  properties: {
    seq: { type: 'integer' },
    run_id: { type: 'string' },
    id: { type: 'string' },
    type: { enum: [...EVENT_TYPES] },
    schema_version: { type: 'integer' },
    time: { type: 'string' },
    causation_id: nullable('string'),
    data: { oneOf: Object.values(data) },
  },
});
const ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [String(c), { description: 'error', ...json({ $ref: '#/components/schemas/Error' }) }]),
  );
/** An environment as both APIs answer it (EnvironmentView in src/common/api-shapes.d.ts): every field always present. */
const ENVIRONMENT_PROPERTIES = {
  id: { type: 'string', pattern: '^[0-9a-f]{32}$' },
  ...CLUSTER_FOLDER_PROPERTIES,
  owner: { type: 'string', description: 'the key owning the cluster folder' },
  status: {
    enum: ['changing', 'live', 'incomplete'],
    description:
      'changing: a run of it is active; live: a run succeeded; incomplete: runs pushed a pass, none finished',
  },
  runs: { type: 'integer', minimum: 1 },
  first_scaffolded_at: nullable('string'),
  updated_at: nullable('string'),
  last_run: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'status', 'finished_at'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      status: { enum: [...RUN_STATUSES] },
      finished_at: nullable('string'),
    },
  },
  infra_commit: nullable('string'),
  full_commit: nullable('string'),
  reference_commit: { ...nullable('string'), description: 'the reference commit the newest pass generated from' },
  reference_dirty: { type: 'boolean', description: "the reference's files differed from reference_commit then" },
  reference_newest: { ...nullable('string'), description: "the reference's newest commit now" },
  commits_behind: {
    type: ['integer', 'null'],
    minimum: 0,
    description: 'commits reference_newest has that reference_commit has not (null: unknown)',
  },
};

const ENVIRONMENT_VIEW = {
  type: 'object',
  additionalProperties: false,
  required: Object.keys(ENVIRONMENT_PROPERTIES),
  properties: ENVIRONMENT_PROPERTIES,
};

const environmentIdParam = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[0-9a-f]{32}$' },
};
const environment = { $ref: '#/components/schemas/Environment' };

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const run = { $ref: '#/components/schemas/Run' };

/** A paged list of the caller's items (runs, environments): one cluster's, `limit` a page, `cursor` the page after. */
function listRoute(path: string, summary: string, what: string, item: object, parameters: object[] = []) {
  return {
    method: 'get',
    path,
    op: {
      summary,
      parameters: [
        ...parameters,
        { name: 'cluster_name', in: 'query', schema: { type: 'string', maxLength: 63 }, description: 'one cluster' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: what,
          ...json({
            type: 'object',
            properties: { items: { type: 'array', items: item }, next_cursor: nullable('string') },
          }),
        },
        ...errors(400, 401, 503),
      },
    },
  };
}

export const ROUTES: Array<{ method: string; path: string; op: object }> = [
  {
    method: 'post',
    path: '/api/v1/scaffolds',
    op: {
      summary: 'Request a scaffold run (202 at once; the same Idempotency-Key returns the same run)',
      parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', maxLength: 200 } }],
      requestBody: { required: true, ...json({ $ref: '#/components/schemas/CreateScaffold' }) },
      responses: {
        '202': { description: 'accepted', headers: { Location: { schema: { type: 'string' } } }, ...json(run) },
        ...errors(400, 401, 403, 409, 413, 415, 422, 503),
      },
    },
  },
  {
    method: 'post',
    path: '/api/v1/scaffolds/preview',
    op: {
      summary:
        'What a run would change in the repository, without running it: the full pass with the given certificate or age recipients (the infra pass for a kubeconfig_secret target), nothing appended or pushed',
      requestBody: { required: true, ...json({ $ref: '#/components/schemas/CreateScaffold' }) },
      responses: {
        '200': {
          description: 'the report',
          ...json({
            type: 'object',
            required: ['pass', 'summary', 'changes'],
            properties: {
              pass: { enum: ['infra', 'full'] },
              note: { type: 'string' },
              strict_refusal: {
                type: 'string',
                description:
                  "why a strict request's run would be refused at this pass: the leftovers of the reference it leaves (summary.leftovers lists each)",
              },
              summary: { type: 'object' },
              full_pass_summary: {
                type: 'object',
                description:
                  'an infra-pass preview (a kubeconfig_secret target): the summary of the full pass a run makes after it, rehearsed with a throwaway certificate (credential plan, leftovers, warnings; its files are not among the changes)',
              },
              changes: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['path', 'change', 'diff'],
                  properties: {
                    path: { type: 'string' },
                    change: { enum: ['added', 'changed', 'removed'] },
                    diff: { type: 'string' },
                    copied_from: {
                      type: 'string',
                      description: 'the reference file this one copies unchanged (its diff is one line naming it)',
                    },
                  },
                },
              },
            },
          }),
        },
        ...errors(400, 401, 403, 413, 415, 422),
      },
    },
  },
  listRoute('/api/v1/scaffolds', 'List runs, newest first', 'runs', run, [
    { name: 'status', in: 'query', schema: { enum: [...RUN_STATUSES] } },
  ]),
  {
    method: 'get',
    path: '/api/v1/scaffolds/{id}',
    op: {
      summary: 'A run',
      parameters: [idParam],
      responses: { '200': { description: 'the run', ...json(run) }, ...errors(401, 404, 503) },
    },
  },
  listRoute(
    '/api/v1/environments',
    "The caller's environments (every one for an admin), by id",
    'environments',
    environment,
  ),
  {
    method: 'get',
    path: '/api/v1/environments/{id}',
    op: {
      summary: 'An environment: what made it, and how far its reference has moved since',
      parameters: [environmentIdParam],
      responses: { '200': { description: 'the environment', ...json(environment) }, ...errors(401, 404, 503) },
    },
  },
  {
    method: 'get',
    path: '/api/v1/scaffolds/{id}/events',
    op: {
      summary: "A run's event history from the stream",
      parameters: [idParam],
      responses: {
        '200': {
          description: 'events',
          ...json({
            type: 'object',
            properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Event' } } },
          }),
        },
        ...errors(401, 404),
      },
    },
  },
  {
    method: 'get',
    path: '/api/v1/scaffolds/{id}/events/stream',
    op: {
      summary:
        'Server-Sent Events of a run, resumable with Last-Event-ID (stream sequence), ending after the terminal event',
      parameters: [idParam, { name: 'Last-Event-ID', in: 'header', schema: { type: 'string' } }],
      responses: {
        '200': { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errors(401, 404),
      },
    },
  },
  {
    method: 'get',
    path: '/api/v1/scaffolds/{id}/credential-plan',
    op: {
      summary:
        "The credential plan by class of the run's reference: Secret keys and how a pass fills them, never a value",
      parameters: [idParam],
      responses: {
        '200': {
          description: 'plan',
          ...json({
            type: 'object',
            required: ['items'],
            properties: {
              items: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['namespace', 'name', 'key', 'class'],
                  properties: {
                    namespace: { type: 'string' },
                    name: { type: 'string' },
                    key: { type: 'string' },
                    class: { enum: [...CREDENTIAL_CLASSES] },
                  },
                },
              },
            },
          }),
        },
        ...errors(401, 404),
      },
    },
  },
  {
    method: 'get',
    path: '/api/v1/scaffolds/{id}/logs',
    op: {
      summary: "The run's log (and Job pod logs with EXECUTOR=kubernetes)",
      parameters: [idParam],
      responses: {
        '200': { description: 'log', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...errors(401, 404),
      },
    },
  },
  {
    method: 'post',
    path: '/api/v1/scaffolds/{id}/cancel',
    op: {
      summary: 'Cancel at the next step boundary',
      parameters: [idParam],
      responses: { '202': { description: 'cancel requested', ...json(run) }, ...errors(401, 404, 409) },
    },
  },
  {
    method: 'post',
    path: '/api/v1/scaffolds/{id}/redrive',
    op: {
      summary: 'Run the current step again (idempotent)',
      parameters: [idParam],
      responses: { '202': { description: 're-driven', ...json(run) }, ...errors(401, 404, 409) },
    },
  },
  {
    method: 'get',
    path: '/api/v1/events',
    op: {
      summary: 'The audit log across runs, from the stream',
      parameters: [
        { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
        { name: 'type', in: 'query', schema: { type: 'string' }, description: 'comma-separated event types' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'events',
          ...json({
            type: 'object',
            properties: {
              items: { type: 'array', items: { $ref: '#/components/schemas/Event' } },
              next_cursor: nullable('string'),
            },
          }),
        },
        ...errors(400, 401),
      },
    },
  },
  {
    method: 'get',
    path: '/api/v1/whoami',
    op: {
      summary: "The presented key's name and role",
      responses: {
        '200': {
          description: 'the caller',
          ...json({
            type: 'object',
            additionalProperties: false,
            required: ['name', 'role'],
            properties: { name: { type: 'string' }, role: { enum: [...ROLES] } },
          }),
        },
        ...errors(401),
      },
    },
  },
  {
    method: 'get',
    path: '/api/v1/openapi.json',
    op: {
      summary: 'This document',
      security: [],
      responses: { '200': { description: 'OpenAPI 3.1', ...json({ type: 'object' }) } },
    },
  },
  {
    method: 'get',
    path: '/api/v1/asyncapi.json',
    op: {
      summary: 'The AsyncAPI document of the NATS API (scaffolds.v1.*) and of the event and log subjects',
      security: [],
      responses: { '200': { description: 'AsyncAPI 3.0', ...json({ type: 'object' }) } },
    },
  },
  ...['/readyz', '/health'].map((path) => ({
    method: 'get' as const,
    path,
    op: {
      summary: 'Readiness: NATS and PostgreSQL reachability',
      security: [],
      responses: {
        '200': { description: 'up', ...json({ type: 'object' }) },
        '503': { description: 'something is down', ...json({ type: 'object' }) },
      },
    },
  })),
  {
    method: 'get',
    path: '/livez',
    op: {
      summary: 'Liveness: the process answers (independent of NATS and PostgreSQL)',
      security: [],
      responses: { '200': { description: 'alive', ...json({ type: 'object' }) } },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    op: {
      summary: 'Prometheus metrics',
      security: [],
      responses: {
        '200': { description: 'text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
      },
    },
  },
];

/** The runner API (version 1): a runner Job's calls for its own run, with the run's credential as a bearer token. */
const RUNNER = `/${RUNNER_API_PREFIX}/{id}`;
const asRunner = { security: [{ runnerToken: [] }], parameters: [idParam] };
const inputParam = { name: 'name', in: 'path', required: true, schema: { enum: ['sealing-cert'] } };
const runnerErrors = errors(400, 403);
const runnerRoutes = (): Array<{ method: string; path: string; op: object }> => [
  {
    method: 'get',
    path: `${RUNNER}/events`,
    op: {
      summary: "Runner: the run's events (403 run_ended once it has ended)",
      ...asRunner,
      responses: {
        '200': {
          description: 'events',
          ...json({
            type: 'object',
            properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Event' } } },
          }),
        },
        ...runnerErrors,
      },
    },
  },
  {
    method: 'post',
    path: `${RUNNER}/commands`,
    op: {
      summary:
        'Runner: report on the step the run is at (decided by the run rules); the same report_id again answers what it appended',
      ...asRunner,
      requestBody: { required: true, ...json(reportSchema()) },
      responses: {
        '200': {
          description: 'decided',
          ...json({
            type: 'object',
            properties: {
              appended: { type: 'array', items: { $ref: '#/components/schemas/Event' } },
              history: { type: 'array', items: { $ref: '#/components/schemas/Event' } },
            },
          }),
        },
        ...runnerErrors,
      },
    },
  },
  {
    method: 'get',
    path: `${RUNNER}/inputs/{name}`,
    op: {
      summary: "Runner: one of the run's inputs (the sealing certificate)",
      ...asRunner,
      parameters: [idParam, inputParam],
      responses: {
        '200': { description: 'the value', ...json({ type: 'object', properties: { value: nullable('string') } }) },
        ...runnerErrors,
      },
    },
  },
  {
    method: 'put',
    path: `${RUNNER}/inputs/{name}`,
    op: {
      summary: 'Runner: the certificate fetched in cert-fetch (only during that step; checked to be one)',
      ...asRunner,
      parameters: [idParam, inputParam],
      requestBody: {
        required: true,
        ...json({ type: 'object', required: ['value'], properties: { value: { type: 'string' } } }),
      },
      responses: { '204': { description: 'written' }, ...runnerErrors },
    },
  },
  {
    method: 'post',
    path: `${RUNNER}/logs`,
    op: {
      summary: "Runner: lines of the run's log (redacted again, stamped with the service's clock)",
      ...asRunner,
      requestBody: { required: true, ...json(logSchema()) },
      responses: {
        '200': { description: 'appended', ...json({ type: 'object', properties: { appended: { type: 'integer' } } }) },
        ...runnerErrors,
      },
    },
  },
];

/** The schemas both documents share (the AsyncAPI one refers to them at the same place), with the kept plans' steps. */
export const sharedSchemas = (steps: readonly string[] = allSteps()) => ({
  CreateScaffold: CREATE_SCHEMA,
  Run: runView(steps),
  Environment: ENVIRONMENT_VIEW,
  Event: eventSchema(dataSchemas(steps)),
  Error: ERROR,
});

export function openApiDocument(): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of [...ROUTES, ...runnerRoutes()]) (paths[r.path] ??= {})[r.method] = r.op;
  return {
    openapi: '3.1.0',
    info: {
      title: 'GitOps Scaffolder',
      version: VERSION,
      description:
        'Scaffolds customer-specific Flux CD trees. The same bodies are served over NATS request/reply on scaffolds.v1.*.',
    },
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        runnerToken: { type: 'http', scheme: 'bearer', description: "a run's runner credential (its Job's Secret)" },
      },
      schemas: sharedSchemas(),
    },
  };
}
