import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { AckPolicy, StorageType } from '@nats-io/jetstream';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import pino from 'pino';
import { JetStreamEventStore } from '#libs/event-store';
import { durableNameFor, redact } from '#libs/steps';
import { LOG_REDACT_PATHS } from '../../src/logging/logger';
import { Metrics } from '../../src/metrics/metrics';
import { PROJECTOR } from '../../src/projection/projector';
import { makeRsaCert } from '../support/certs';
import { bareRepo } from '../support/services';
import { api, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

function readmeExample(name: string): any {
  const readme = readFileSync(join(__dirname, '../../docs/api.md'), 'utf8');
  const m = new RegExp(`<!-- example: ${name} -->\\s*\`\`\`json\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!m) throw new Error(`docs/api.md has no example ${name}`);
  return JSON.parse(m[1]);
}

/** Scrape lines of one metric, by the value of its consumer label. */
function byConsumer(scrape: string, metric: string): Map<string, number> {
  const lines = [...scrape.matchAll(new RegExp(`^${metric}\\{consumer="([^"]+)"\\} (\\S+)$`, 'gm'))];
  return new Map(lines.map(([, consumer, value]) => [consumer, Number(value)]));
}

describe('observability: metrics, OpenAPI, log redaction', () => {
  const stack = useServiceStack();
  const cert = makeRsaCert();
  const remote = bareRepo();

  /**
   * The metrics of an event stream of the test's own (unique name, in memory, deleted after): what the
   * lag gauges make of the consumers `fill` adds to it.
   */
  async function scrapeOfStream(
    fill: (stream: { name: string; subject: (run: string) => string; store: JetStreamEventStore }) => Promise<void>,
  ): Promise<string> {
    const name = `METRICS_${randomUUID().replaceAll('-', '')}`;
    const subject = (run: string) => `${name.toLowerCase()}.run.${run}`;
    const nc = stack.svc.runtime.store.nc;
    const store = await JetStreamEventStore.open(nc, { events: name, logs: `${name}_LOGS`, inputs: `${name}_INPUTS` });
    await store.jsm.streams.add({ name, subjects: [subject('*')], storage: StorageType.Memory });
    try {
      await fill({ name, subject, store });
      return await new Metrics(store).registry.metrics();
    } finally {
      await store.jsm.streams.delete(name);
    }
  }

  it('exports run, step, lag and API latency metrics', async () => {
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', {
      cluster_name: 'metrics',
      domain: 'metrics.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo: { url: remote.url, branch: 'main' },
      target: { sealing_cert_pem: cert.certPem },
    });
    await waitFor('success', async () =>
      (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}`)).json.status === 'succeeded'
        ? true
        : undefined,
    );
    await waitFor('projection', async () =>
      (await api(stack.svc.base, 'GET', '/api/v1/scaffolds?status=succeeded')).json.items.length === 1
        ? true
        : undefined,
    );
    // The projector counts a run after its transaction commits; a GET on another connection can see the row first.
    const scrape = async () => {
      const res = await fetch(`${stack.svc.base}/metrics`);
      expect(res.status).toBe(200);
      return res.text();
    };
    // The projector acknowledges its batch after the commit: wait until the metrics show it caught up.
    const text = await waitFor('the finished run in the metrics, the projector caught up', async () => {
      const body = await scrape();
      const done =
        /^scaffold_runs_finished_total\{/m.test(body) &&
        /^scaffold_consumer_lag_events\{consumer="projector"\} 0$/m.test(body) &&
        /^scaffold_projection_lag_events 0$/m.test(body);
      return done ? body : undefined;
    });
    expect(text).toMatch(/^scaffold_runs_started_total 1$/m);
    expect(text).toMatch(/^scaffold_runs_finished_total\{status="succeeded",step="full-pass"\} 1$/m);
    expect(text).toMatch(/^scaffold_step_duration_seconds_count\{step="infra-pass",outcome="succeeded"\} 1$/m);
    expect(text).toMatch(/^scaffold_step_duration_seconds_count\{step="full-pass",outcome="succeeded"\} 1$/m);
    expect(text).toMatch(/^scaffold_consumer_lag_events\{consumer="projector"\} 0$/m);
    expect(text).toMatch(/^scaffold_projection_lag_events 0$/m);
    expect(text).toMatch(/^scaffold_projection_delay_seconds_count 6$/m);
    expect(text).toMatch(
      /^scaffold_api_request_duration_seconds_count\{transport="http",route="POST \/api\/v1\/scaffolds",status="202"\} 1$/m,
    );
    expect(text).toMatch(
      /^scaffold_api_request_duration_seconds_count\{transport="http",route="GET \/api\/v1\/scaffolds\/:id",status="200"\} \d+$/m,
    );
  });

  it('exports the process metrics and what runs: version and Node.js', async () => {
    const text = await (await fetch(`${stack.svc.base}/metrics`)).text();
    const { version } = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));
    expect(text).toMatch(/^process_cpu_user_seconds_total \S+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
    expect(text).toContain(`\nscaffold_build_info{version="${version}",node_version="${process.version}"} 1\n`);
  });

  it('labels each durable consumer with its name: pending and lag of the step consumers and the projector', async () => {
    const [runA, runB] = [randomUUID(), randomUUID()];
    const text = await scrapeOfStream(async ({ name, subject, store }) => {
      for (const run of [runA, runA, runA, runB, runB]) await store.js.publish(subject(run), '{}');
      await store.jsm.consumers.add(name, {
        durable_name: durableNameFor('infra-pass'),
        ack_policy: AckPolicy.Explicit,
        filter_subject: subject('*'),
      });
      await store.jsm.consumers.add(name, {
        durable_name: PROJECTOR,
        ack_policy: AckPolicy.Explicit,
        filter_subject: subject('*'),
      });
    });
    expect(Object.fromEntries(byConsumer(text, 'scaffold_consumer_pending'))).toEqual({
      'step-infra-pass': 5,
      [PROJECTOR]: 5,
    });
    expect(byConsumer(text, 'scaffold_consumer_lag_events').get('step-infra-pass')).toBe(5);
    expect(text).toMatch(/^scaffold_projection_lag_events 5$/m);
  });

  it('counts every consumer of the event stream, past the first page of the listing (256), under a few label values', async () => {
    // Per-run consumers of earlier versions count under their step's durable, any other durable as "other".
    const perRun = Array.from({ length: 130 }, (_, i) => `${durableNameFor('infra-pass')}-run-${randomUUID()}-${i}`);
    const others = Array.from({ length: 130 }, (_, i) => `consumer-${i}`);
    const text = await scrapeOfStream(async ({ subject, name, store }) => {
      await store.js.publish(subject(randomUUID()), '{}');
      await Promise.all(
        [...perRun, ...others].map((durable_name) =>
          store.jsm.consumers.add(name, { durable_name, ack_policy: AckPolicy.Explicit, mem_storage: true }),
        ),
      );
    });
    expect(Object.fromEntries(byConsumer(text, 'scaffold_consumer_pending'))).toEqual({
      'step-infra-pass': 130,
      other: 130,
    });
    expect(Object.fromEntries(byConsumer(text, 'scaffold_consumer_lag_events'))).toEqual({
      'step-infra-pass': 1,
      other: 1,
    });
  });

  it('documents every registered route in the OpenAPI document, and the examples of docs/api.md validate against it', async () => {
    const doc = (await api(stack.svc.base, 'GET', '/api/v1/openapi.json')).json;
    expect(doc.openapi).toBe('3.1.0');
    const router = (stack.svc.app.getHttpAdapter().getInstance() as any).router;
    // Nest mounts module middleware (nestjs-pino's request logger) as a catch-all route: not an endpoint.
    const endpoints = router.stack.filter((l: any) => l.route && !l.route.path.includes('*splat'));
    const registered = endpoints.flatMap((l: any) =>
      Object.keys(l.route.methods).map((m) => `${m} ${l.route.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    expect(registered.length).toBeGreaterThanOrEqual(12);
    for (const r of registered) {
      const [method, path] = r.split(' ');
      expect({ route: r, documented: Boolean(doc.paths[path]?.[method]) }).toEqual({ route: r, documented: true });
    }
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const validateCreate = ajv.compile(
      doc.paths['/api/v1/scaffolds'].post.requestBody.content['application/json'].schema,
    );
    const example = readmeExample('create-request');
    expect(validateCreate(example) ? [] : validateCreate.errors).toEqual([]);
    const withVars = readmeExample('create-request-cluster-vars');
    expect(validateCreate(withVars) ? [] : validateCreate.errors).toEqual([]);
    expect(validateCreate({ ...withVars, cluster_vars: { X: 'a', Y: 1 } })).toBe(false);
    const withHosts = readmeExample('create-request-host-map');
    expect(validateCreate(withHosts) ? [] : validateCreate.errors).toEqual([]);
    expect(validateCreate({ ...withHosts, host_map: { 'a.staging': 2 } })).toBe(false);
    const validateRun = ajv.compile(doc.components.schemas.Run);
    const response = readmeExample('run-response');
    expect(validateRun(response) ? [] : validateRun.errors).toEqual([]);
    // And the real answer to a POST validates too.
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', {
      ...example,
      repo: { url: remote.url, branch: 'main' },
      target: { sealing_cert_pem: cert.certPem },
    });
    expect(validateRun(created.json) ? [] : validateRun.errors).toEqual([]);
  });

  it('redacts secrets in structured logs and in run log lines', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = pino({ redact: { paths: LOG_REDACT_PATHS, censor: '***' } }, sink);
    logger.info(
      {
        req: { headers: { 'x-api-key': 'KEY-123456789' } },
        body: { password: 'PW-123456789', sealing_cert_pem: 'CERT-BODY', token: 'TOK-123456789' },
      },
      'request',
    );
    const out = lines.join('');
    for (const secret of ['KEY-123456789', 'PW-123456789', 'CERT-BODY', 'TOK-123456789'])
      expect(out).not.toContain(secret);
    expect(out).toContain('***');
    expect(redact('push to https://bot:hunter2-secret@git.example.com/x.git failed')).toBe(
      'push to https://***@git.example.com/x.git failed',
    );
    expect(redact('password=abc123def token: xyz987')).toBe('password=*** token: ***');
    expect(redact('value S3cr3tValue in output', ['S3cr3tValue'])).toBe('value *** in output');
    expect(redact('{"password": "plainwords", "token":"abc"} Authorization: Bearer x')).toBe(
      '{"password": "***", "token":"***"} Authorization: ***',
    );
  });

  it('redacts values, never the ordinary words that follow "secret:" or "token:" in prose', () => {
    const prose = [
      'clusters/dev/apps/registry-credentials.yaml Secret registry-credentials is a registry pull secret: give REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD',
      'the supplied token: missing from the credentials Secret',
      'password: see the credentials_secret of the request',
    ];
    for (const line of prose) expect(redact(line)).toBe(line);
    expect(redact('token: ghp_0123abcd and secret: s3cr3t-value')).toBe('token: *** and secret: ***');
  });
});
