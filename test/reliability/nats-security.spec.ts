import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { headers } from '@nats-io/nats-core';
import type { NatsConnection } from '@nats-io/nats-core';
import type { RunInputs } from '#libs/event-store';
import { STEPS } from '#libs/events';
import { durableNameFor, SEALING_CERT_INPUT } from '#libs/steps';
import { LAUNCHER, PROJECTOR } from '../../src/event-store/consumer-names';
import { main as ctl } from '../../src/ctl';
import { DEFAULT_REPLY_PREFIXES } from '../../src/config/reply-subjects';
import { loadConfig } from '../../src/config/config';
import { NatsClient } from '../../src/event-store/nats-client';
import { RUN_INPUTS } from '../../src/event-store/event-store.module';
import { makeRsaCert, makeTestTls } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { runJob, runnerAccess } from '../support/runner-job';
import { INBOX, SecureNats } from '../support/secure-nats';
import { API_KEY, RunningService, refusedReplies, startService, streamCounts, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo, freePort, gitLog, TestDatabase } from '../support/services';
import pino from 'pino';

jest.setTimeout(120_000);

const silent = pino({ level: 'silent' });

/** The request/reply API as a controller calls it over its own connection. */
async function call(nc: NatsConnection, subject: string, payload: unknown): Promise<{ status: number; json: any }> {
  const h = headers();
  h.set('X-Api-Key', API_KEY);
  const m = await nc.request(subject, JSON.stringify(payload), { timeout: 20_000, headers: h });
  return { status: Number(m.headers?.get('Status-Code') || 200), json: JSON.parse(m.string()) };
}

/** A subscription the server must refuse: nats.js closes it with the server's permission error. */
async function refusedSubscription(nc: NatsConnection, subject: string) {
  const closedWith = await nc.subscribe(subject).closed;
  expect(String(closedWith)).toMatch(/permissions violation for subscription/i);
}

/** A request the server must refuse for this identity (publish permission): nats.js rejects it. */
async function refusedRequest(nc: NatsConnection, subject: string, body = '{}') {
  await expect(nc.request(subject, body, { timeout: 3_000 })).rejects.toThrow(/permissions violation/i);
}

/**
 * Reply subjects that, answered with the service's rights, would purge the event or log stream,
 * replace a run's sealing certificate, break its log or append to its events.
 */
const hostileReplies = (runId: string) => [
  '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS',
  '$JS.API.STREAM.PURGE.SCAFFOLD_LOGS',
  `scaffold.input.${runId}.sealing-cert`,
  `scaffold.logs.${runId}`,
  `scaffold.run.${runId}`,
];
const API_SUBJECTS = ['scaffolds.v1.get', 'scaffolds.v1.create', 'scaffolds.v1.logs', 'environments.v1.get'];

/** What a hostile reply subject could change: the streams' message counts and the run's stored certificate. */
async function whatRepliesCouldChange(svc: RunningService, runId: string) {
  return {
    streams: await streamCounts(svc),
    cert: await svc.app.get<RunInputs>(RUN_INPUTS).get(runId, SEALING_CERT_INPUT),
  };
}

/**
 * The attack: requests without an API key to the API subjects, each naming a hostile reply subject
 * (and `extra` ones). Returns how many were sent.
 */
async function requestWithHostileReplies(
  attacker: NatsConnection,
  runId: string,
  extra: string[] = [],
): Promise<number> {
  const replies = [...hostileReplies(runId), ...extra];
  for (const subject of API_SUBJECTS) for (const reply of replies) attacker.publish(subject, '{}', { reply });
  await attacker.flush();
  return API_SUBJECTS.length * replies.length;
}

/** Time for anything the service might (wrongly) publish to reach JetStream after the requests were handled. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

describe('NATS with TLS and one least-privilege identity per role (the shipped deploy/nats configuration)', () => {
  let nats: SecureNats;
  let db: TestDatabase;
  let management: FakeKube;
  let target: FakeKube;
  let svc: RunningService;
  let controller: NatsConnection;
  const cert = makeRsaCert();
  const remote = bareRepo();
  let runId: string;

  beforeAll(async () => {
    nats = await SecureNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    target = await new FakeKube().start();
    svc = await startService({
      ...nats.env('service'),
      DATABASE_URL: db.url,
      EXECUTOR: 'kubernetes',
      KUBECONFIG: management.kubeconfigFile(),
      JOB_WATCH_INTERVAL_SECONDS: '0.3',
    });
    controller = await nats.connect('controller');
  });
  afterAll(async () => {
    await controller?.close();
    await svc?.stop();
    await management.stop();
    await target.stop();
    await nats.destroy();
    await db.drop();
  });

  it('a run: the controller asks over NATS, the service works with its identity over TLS, a real scaffold-runner reports through the service with no NATS login, scaffolderctl reads with the ops identity', async () => {
    management.putSecret('capi-clusters', 'secure-kubeconfig', { value: target.kubeconfig() });
    target.installSealedSecrets('plain', cert.certPem);
    const created = await call(controller, 'scaffolds.v1.create', {
      cluster_name: 'secure',
      domain: 'secure.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo: { url: remote.url, branch: 'main' },
      target: { kubeconfig_secret: { namespace: 'capi-clusters', name: 'secure-kubeconfig', key: 'value' } },
    });
    expect(created.json.status).toBe('queued');
    runId = created.json.id;
    const job = await runJob(runId, {
      ...(await runnerAccess(management, runId, svc.base)),
      KUBECONFIG: management.kubeconfigFile(),
      WORK_DIR: tempDir('runner-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
      REGISTRY_SERVER: 'registry.test.example.com',
      REGISTRY_USERNAME: 'job-puller',
      REGISTRY_PASSWORD: 'JobRegistryPassword-0a1b2c3d4e',
      SEALED_SECRETS_POLL_INITIAL_MS: '50',
      LOG_LEVEL: 'warn',
    });
    expect(job.output).not.toMatch(/permission/i);
    expect(job.code).toBe(0);
    const done = await waitFor('success over NATS', async () => {
      const r = await call(controller, 'scaffolds.v1.get', { id: runId });
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    expect(done.full_commit).toMatch(/^[0-9a-f]{40}$/);
    expect(gitLog(remote.dir)).toHaveLength(3);
    // The controller's identity reaches the environments API too (environments.v1.>).
    const environments = await call(controller, 'environments.v1.list', {});
    expect(environments.json.items.map((e: any) => e.last_run.id)).toEqual([runId]);

    const lines: string[] = [];
    const opsEnv = { ...nats.env('ops'), DATABASE_URL: db.url };
    expect(await ctl(['events', runId], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(lines.some((l) => l.includes('ScaffoldSucceeded'))).toBe(true);
    expect(await ctl(['status', '--json'], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(JSON.parse(lines[lines.length - 1]).stream.name).toBe('SCAFFOLD_EVENTS');
    expect(await ctl(['replay', '--from-seq', '1', '--run', runId], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(await ctl(['replay', '--from-seq', '1'], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(await ctl(['tail', '--count', '2', '--new', '0'], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(await ctl(['stream-info'], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(await ctl(['rebuild-projection', '--json'], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(JSON.parse(lines[lines.length - 1]).rows).toBe(1);
    // ops may not delete its readers' consumers: they are ephemeral and expire by themselves within a minute.
    const { jsm } = svc.runtime.store;
    for await (const c of jsm.consumers.list('SCAFFOLD_EVENTS'))
      if (!['projector', 'job-launcher'].includes(c.name))
        expect([c.name, c.config.durable_name, c.config.inactive_threshold]).toEqual([c.name, undefined, 60e9]);
    // Everything the three identities did was within their permissions.
    expect(nats.server.output).not.toMatch(/Violation/);
  });

  it('refuses the controller identity everything but the request/reply API: forged events, inputs, purges, deletes, consumers, answering requests', async () => {
    const before = (await svc.runtime.store.jsm.streams.info('SCAFFOLD_EVENTS')).state.messages;
    const forged = JSON.stringify({ id: 'forged', type: 'ScaffoldSucceeded', run_id: runId, data: {} });
    // Publishing a forged event, plain or as a JetStream publish.
    controller.publish(`scaffold.run.${runId}`, forged);
    await refusedRequest(controller, `scaffold.run.${runId}`, forged);
    // Reading the run inputs (the certificate, supplied credentials), directly or through the JetStream API.
    await refusedRequest(
      controller,
      '$JS.API.STREAM.MSG.GET.SCAFFOLD_INPUTS',
      JSON.stringify({ last_by_subj: `scaffold.input.${runId}.>` }),
    );
    await refusedRequest(
      controller,
      '$JS.API.DIRECT.GET.SCAFFOLD_INPUTS',
      JSON.stringify({ last_by_subj: `scaffold.input.${runId}.cert` }),
    );
    // Purging or deleting the system of record, creating a consumer, or any JetStream API at all.
    await refusedRequest(controller, '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS');
    await refusedRequest(controller, '$JS.API.STREAM.DELETE.SCAFFOLD_EVENTS');
    await refusedRequest(
      controller,
      '$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS',
      JSON.stringify({ stream_name: 'SCAFFOLD_EVENTS', config: { ack_policy: 'none' } }),
    );
    await refusedRequest(controller, '$JS.API.INFO');
    // Answering requests meant for the service, or listening to events or other identities' replies.
    for (const subject of [
      'scaffolds.v1.get',
      'scaffolds.v1.>',
      `scaffold.run.${runId}`,
      'scaffold.input.>',
      '_INBOX_scaffolder.>',
      '_INBOX.>',
    ]) {
      await refusedSubscription(controller, subject);
    }
    // The real service still answers, and the stream holds nothing new.
    expect((await call(controller, 'scaffolds.v1.get', { id: runId })).json.status).toBe('succeeded');
    await controller.flush();
    expect((await svc.runtime.store.jsm.streams.info('SCAFFOLD_EVENTS')).state.messages).toBe(before);
    expect(nats.server.output).toMatch(/Publish Violation - User "scaffolder-controller", Subject "scaffold\.run\./);
  });

  it("answers API requests only on a caller inbox: with the controller identity and no API key, replies aimed at JetStream, a run's input, log or events change nothing", async () => {
    const before = await whatRepliesCouldChange(svc, runId);
    expect(before.cert).toContain('BEGIN CERTIFICATE');
    const refusedBefore = await refusedReplies(svc);
    const sent = await requestWithHostileReplies(controller, runId);
    // The controller's own requests are still answered (on its inbox), after the hostile ones on the same subject.
    expect((await call(controller, 'scaffolds.v1.get', { id: runId })).json.status).toBe('succeeded');
    await settle();
    expect(await whatRepliesCouldChange(svc, runId)).toEqual(before);
    const logs = await call(controller, 'scaffolds.v1.logs', { id: runId });
    expect([logs.status, logs.json.log.length > 0]).toEqual([200, true]);
    expect(await refusedReplies(svc)).toBe(refusedBefore + sent);
    // The service's own check stopped them: it never even tried to publish there.
    expect(nats.server.output).not.toMatch(/Violation - User "scaffolder-service"/);
  });

  it("refuses the ops identity every write (#28): no append to events, logs or inputs, no create, update or delete of the service's durables", async () => {
    const ops = await nats.connect('ops');
    const { jsm } = svc.runtime.store;
    const projector = (await jsm.consumers.info('SCAFFOLD_EVENTS', 'projector')).config;
    const before = await streamCounts(svc);
    try {
      const forged = JSON.stringify({ id: 'forged', type: 'Redrive', run_id: runId, data: {} });
      for (const subject of [`scaffold.run.${runId}`, `scaffold.logs.${runId}`, `scaffold.input.${runId}.sealing-cert`])
        await refusedRequest(ops, subject, forged);
      // The attack of #28 on the service's durables, every way the JetStream API offers it.
      const hostile = (name: string) =>
        JSON.stringify({
          stream_name: 'SCAFFOLD_EVENTS',
          config: {
            durable_name: name,
            filter_subject: 'scaffold.run.nothing',
            ack_policy: 'explicit',
            deliver_policy: 'all',
          },
        });
      for (const name of ['projector', 'job-launcher', 'step-infra-pass']) {
        for (const subject of [
          `$JS.API.CONSUMER.DURABLE.CREATE.SCAFFOLD_EVENTS.${name}`,
          `$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS.${name}`,
          `$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS.${name}.scaffold.run.nothing`,
          `$JS.API.CONSUMER.UPDATE.SCAFFOLD_EVENTS.${name}`,
          `$JS.API.CONSUMER.DELETE.SCAFFOLD_EVENTS.${name}`,
        ])
          await refusedRequest(ops, subject, hostile(name));
      }
      // Nor may it read the run inputs (certificates, supplied credentials).
      await refusedRequest(
        ops,
        '$JS.API.STREAM.MSG.GET.SCAFFOLD_INPUTS',
        JSON.stringify({ last_by_subj: `scaffold.input.${runId}.sealing-cert` }),
      );
    } finally {
      await ops.close();
    }
    expect((await jsm.consumers.info('SCAFFOLD_EVENTS', 'projector')).config).toEqual(projector);
    expect(await streamCounts(svc)).toEqual(before);
  });

  it('refuses the ops identity anything administrative on the streams', async () => {
    for (const role of ['ops'] as const) {
      const nc = await nats.connect(role);
      try {
        for (const subject of [
          '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS',
          '$JS.API.STREAM.DELETE.SCAFFOLD_EVENTS',
          '$JS.API.STREAM.UPDATE.SCAFFOLD_EVENTS',
          '$JS.API.STREAM.CREATE.SCAFFOLD_EVIL',
        ]) {
          await refusedRequest(nc, subject, JSON.stringify({ name: 'SCAFFOLD_EVENTS', subjects: ['scaffold.run.>'] }));
        }
        await refusedSubscription(nc, 'scaffolds.v1.create');
      } finally {
        await nc.close();
      }
    }
    expect((await svc.runtime.store.jsm.streams.info('SCAFFOLD_EVENTS')).state.messages).toBeGreaterThan(0);
  });
});

describe("a plain nats-server without permissions: the service's own check keeps replies to callers' inboxes", () => {
  const stack = useServiceStack(() => ({ RUN_STEP_WORKERS: 'false' }));
  const cert = makeRsaCert();
  let attacker: NatsConnection;
  let runId: string;

  beforeAll(async () => {
    const { connect } = await import('@nats-io/transport-node');
    attacker = await connect({ servers: stack.nats.url });
    // A run that stays queued (no step workers), with the certificate it was given stored as its input.
    const created = await call(attacker, 'scaffolds.v1.create', {
      cluster_name: 'plain',
      domain: 'plain.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo: { url: bareRepo().url, branch: 'main' },
      target: { sealing_cert_pem: cert.certPem },
    });
    expect(created.json.status).toBe('queued');
    runId = created.json.id;
  });
  afterAll(() => attacker?.close());

  it('drops requests whose reply subject is a JetStream API, input, log or event subject, or an inbox lookalike: nothing published there, nothing changed', async () => {
    const before = await whatRepliesCouldChange(stack.svc, runId);
    expect(before.cert?.trim()).toBe(cert.certPem.trim());
    const refusedBefore = await refusedReplies(stack.svc);
    // Nothing but the service stops its publishes here: watch where they would land (the queued run itself publishes nothing).
    const published: string[] = [];
    for (const watched of [
      '$JS.API.STREAM.PURGE.>',
      `scaffold.input.${runId}.>`,
      `scaffold.logs.${runId}`,
      `scaffold.run.${runId}`,
      '_INBOX_controllerX.>',
      '_INBOX_controller',
    ]) {
      attacker.subscribe(watched, { callback: (_, m) => void published.push(m.subject) });
    }
    const sent = await requestWithHostileReplies(attacker, runId, ['_INBOX_controllerX.1', '_INBOX_controller']);
    await settle();
    expect(await whatRepliesCouldChange(stack.svc, runId)).toEqual(before);
    expect(published).toEqual([]);
    expect(await refusedReplies(stack.svc)).toBe(refusedBefore + sent);
    // A default client (reply subject _INBOX.<nuid>.<n>) is still answered.
    expect((await call(attacker, 'scaffolds.v1.get', { id: runId })).json.status).toBe('queued');
  });
});

describe('the shipped permission sets', () => {
  const permissions = JSON.parse(readFileSync(join(__dirname, '../../deploy/nats/permissions.json'), 'utf8'));
  const callers = Object.entries<any>(permissions.roles).filter(([, role]) => role.publish.includes('scaffolds.v1.>'));

  it('the service answers exactly the roles that may call the API, on their inboxes, and nothing else (no allow_responses)', () => {
    expect(callers.map(([name]) => name)).toEqual(['controller']);
    expect(permissions.roles.service.answers).toEqual(callers.map(([name]) => name));
    for (const role of Object.values<any>(permissions.roles)) expect(role).not.toHaveProperty('allow_responses');
    const conf = readFileSync(join(__dirname, '../../deploy/nats/permissions.conf'), 'utf8');
    expect(conf).not.toMatch(/allow_responses/);
    const servicePublish = conf.split('SERVICE_PERMISSIONS = {\n')[1].split('\n')[0];
    expect(servicePublish).toMatch(/^ {2}publish: \{ allow: \[.*"_INBOX_controller\.>"\] \}$/);
  });

  it("the service's default NATS_REPLY_PREFIXES holds every caller's inbox prefix (and the clients' default _INBOX), no other role's", () => {
    for (const [name, role] of callers)
      expect([name, DEFAULT_REPLY_PREFIXES]).toEqual([name, expect.arrayContaining([role.inbox])]);
    expect([...DEFAULT_REPLY_PREFIXES].sort()).toEqual([...callers.map(([, role]) => role.inbox), '_INBOX'].sort());
    expect(INBOX.controller).toBe('_INBOX_controller');
  });

  it("the durables ops may not create (#28) are exactly the service's durable names: its own and the run plans' steps'", () => {
    const names = [PROJECTOR, LAUNCHER, ...STEPS.map((step) => durableNameFor(step))];
    expect([...permissions.service_durables].sort()).toEqual([PROJECTOR, LAUNCHER].sort());
    const conf = readFileSync(join(__dirname, '../../deploy/nats/permissions.conf'), 'utf8');
    const denied = conf.split('OPS_PERMISSIONS = {\n')[1].split('deny: [')[1].split(']')[0];
    const create = '$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS.';
    expect(denied).toBe([...names.map((n) => `"${create}${n}"`), ...names.map((n) => `"${create}${n}.>"`)].join(', '));
  });

  it('permissions.conf is exactly what render.mjs makes of permissions.json (one source for server users and nsc)', () => {
    const dir = join(__dirname, '../../deploy/nats');
    expect(execFileSync(process.execPath, [join(dir, 'render.mjs'), 'conf'], { encoding: 'utf8' })).toBe(
      readFileSync(join(dir, 'permissions.conf'), 'utf8'),
    );
    const nsc = execFileSync(process.execPath, [join(dir, 'render.mjs'), 'nsc'], { encoding: 'utf8' });
    expect(nsc).toContain(
      "nsc add user scaffolder-controller \\\n  --allow-pub 'scaffolds.v1.>,environments.v1.>' \\\n  --allow-sub '_INBOX_controller.>'",
    );
  });
});

describe('connecting to NATS fails at start with the reason, not a retry loop', () => {
  let nats: SecureNats;
  beforeAll(async () => (nats = await SecureNats.start()));
  afterAll(() => nats.destroy());

  const connect = (env: Record<string, string>) =>
    NatsClient.connect(loadConfig({ API_KEY, ...env }).nats, 'test', silent);

  it('names refused credentials', async () => {
    const started = Date.now();
    await expect(
      connect({ ...nats.env('service'), NATS_PASSWORD_FILE: '', NATS_PASSWORD: 'wrong-password' }),
    ).rejects.toThrow(`NATS at ${nats.url} (user scaffolder-service, TLS) refused the credentials`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('names a TLS failure: a server certificate from a CA the client does not trust', async () => {
    const other = makeTestTls();
    await expect(connect({ ...nats.env('service'), NATS_TLS_CA: other.caFile })).rejects.toThrow(/TLS failed/);
  });

  it('uses the next server of a comma-separated NATS_URL when the first does not answer', async () => {
    const dead = `tls://127.0.0.1:${await freePort()}`;
    const client = await connect({ ...nats.env('service'), NATS_URL: `${dead},${nats.url}` });
    expect(client.connection.getServer()).toBe(`127.0.0.1:${nats.server.port}`);
    await client.connection.close();
  });

  it('refuses settings that cannot work before connecting: credentials in the URL, two ways to authenticate, a half client certificate, an unreadable file', () => {
    expect(() => loadConfig({ API_KEY, NATS_URL: 'nats://u:p@127.0.0.1:4222' })).toThrow(
      /NATS_URL: must not carry credentials/,
    );
    expect(() => loadConfig({ API_KEY, NATS_TOKEN: 't', NATS_USER: 'u', NATS_PASSWORD: 'p' })).toThrow(
      /give one way of authenticating/,
    );
    expect(() => loadConfig({ API_KEY, NATS_TLS_CERT: nats.tls.caFile })).toThrow(/NATS_TLS_CERT and NATS_TLS_KEY/);
    expect(() => loadConfig({ API_KEY, NATS_CREDS: '/nonexistent/service.creds' })).toThrow(
      /NATS_CREDS: \/nonexistent\/service.creds cannot be read/,
    );
    expect(() => loadConfig({ API_KEY, NATS_URL: 'http://127.0.0.1:4222' })).toThrow(/NATS_URL: scheme http:/);
  });
});
