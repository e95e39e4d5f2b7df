import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { headers } from '@nats-io/nats-core';
import type { NatsConnection } from '@nats-io/nats-core';
import { main as ctl } from '../../src/ctl';
import { loadConfig } from '../../src/config/config';
import { NatsClient } from '../../src/event-log/nats-client';
import { makeRsaCert, makeTestTls } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { runJob } from '../support/runner-job';
import { SecureNats } from '../support/secure-nats';
import { API_KEY, RunningService, startService, waitFor } from '../support/service';
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
    svc = await startService({ ...nats.env('service'), DATABASE_URL: db.url, EXECUTOR: 'kubernetes', KUBECONFIG: management.kubeconfigFile(), JOB_WATCH_INTERVAL_SECONDS: '0.3' });
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

  it('a run: the controller asks over NATS, the service and a real scaffold-runner work with their own identities over TLS, scaffolderctl reads with the ops identity', async () => {
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
      ...nats.env('runner'),
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

    const lines: string[] = [];
    const opsEnv = { ...nats.env('ops'), DATABASE_URL: db.url };
    expect(await ctl(['events', runId], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(lines.some((l) => l.includes('ScaffoldSucceeded'))).toBe(true);
    expect(await ctl(['status', '--json'], opsEnv, (l) => lines.push(l))).toBe(0);
    expect(JSON.parse(lines[lines.length - 1]).stream.name).toBe('SCAFFOLD_EVENTS');
    expect(await ctl(['replay', '--from-seq', '1', '--run', runId], opsEnv, (l) => lines.push(l))).toBe(0);
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
    await refusedRequest(controller, '$JS.API.STREAM.MSG.GET.SCAFFOLD_INPUTS', JSON.stringify({ last_by_subj: `scaffold.input.${runId}.>` }));
    await refusedRequest(controller, '$JS.API.DIRECT.GET.SCAFFOLD_INPUTS', JSON.stringify({ last_by_subj: `scaffold.input.${runId}.cert` }));
    // Purging or deleting the system of record, creating a consumer, or any JetStream API at all.
    await refusedRequest(controller, '$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS');
    await refusedRequest(controller, '$JS.API.STREAM.DELETE.SCAFFOLD_EVENTS');
    await refusedRequest(controller, '$JS.API.CONSUMER.CREATE.SCAFFOLD_EVENTS', JSON.stringify({ stream_name: 'SCAFFOLD_EVENTS', config: { ack_policy: 'none' } }));
    await refusedRequest(controller, '$JS.API.INFO');
    // Answering requests meant for the service, or listening to events or other identities' replies.
    for (const subject of ['scaffolds.v1.get', 'scaffolds.v1.>', `scaffold.run.${runId}`, 'scaffold.input.>', '_INBOX_scaffolder.>', '_INBOX.>']) {
      await refusedSubscription(controller, subject);
    }
    // The real service still answers, and the stream holds nothing new.
    expect((await call(controller, 'scaffolds.v1.get', { id: runId })).json.status).toBe('succeeded');
    await controller.flush();
    expect((await svc.runtime.store.jsm.streams.info('SCAFFOLD_EVENTS')).state.messages).toBe(before);
    expect(nats.server.output).toMatch(/Publish Violation - User "scaffolder-controller", Subject "scaffold\.run\./);
  });

  it('refuses the runner and ops identities anything administrative on the streams', async () => {
    for (const role of ['runner', 'ops'] as const) {
      const nc = await nats.connect(role);
      try {
        for (const subject of ['$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS', '$JS.API.STREAM.DELETE.SCAFFOLD_EVENTS', '$JS.API.STREAM.UPDATE.SCAFFOLD_EVENTS', '$JS.API.STREAM.CREATE.SCAFFOLD_EVIL']) {
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

describe('the shipped permission sets', () => {
  it('permissions.conf is exactly what render.mjs makes of permissions.json (one source for server users and nsc)', () => {
    const dir = join(__dirname, '../../deploy/nats');
    expect(execFileSync(process.execPath, [join(dir, 'render.mjs'), 'conf'], { encoding: 'utf8' })).toBe(readFileSync(join(dir, 'permissions.conf'), 'utf8'));
    const nsc = execFileSync(process.execPath, [join(dir, 'render.mjs'), 'nsc'], { encoding: 'utf8' });
    expect(nsc).toContain("nsc add user scaffolder-controller \\\n  --allow-pub 'scaffolds.v1.>' \\\n  --allow-sub '_INBOX_controller.>'");
  });
});

describe('connecting to NATS fails at start with the reason, not a retry loop', () => {
  let nats: SecureNats;
  beforeAll(async () => (nats = await SecureNats.start()));
  afterAll(() => nats.destroy());

  const connect = (env: Record<string, string>) => NatsClient.connect(loadConfig({ API_KEY, ...env }).nats, 'test', silent);

  it('names refused credentials', async () => {
    const started = Date.now();
    await expect(connect({ ...nats.env('service'), NATS_PASSWORD_FILE: '', NATS_PASSWORD: 'wrong-password' })).rejects.toThrow(
      `NATS at ${nats.url} (user scaffolder-service, TLS) refused the credentials`,
    );
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
    expect(() => loadConfig({ API_KEY, NATS_URL: 'nats://u:p@127.0.0.1:4222' })).toThrow(/NATS_URL: must not carry credentials/);
    expect(() => loadConfig({ API_KEY, NATS_TOKEN: 't', NATS_USER: 'u', NATS_PASSWORD: 'p' })).toThrow(/give one way of authenticating/);
    expect(() => loadConfig({ API_KEY, NATS_TLS_CERT: nats.tls.caFile })).toThrow(/NATS_TLS_CERT and NATS_TLS_KEY/);
    expect(() => loadConfig({ API_KEY, NATS_CREDS: '/nonexistent/service.creds' })).toThrow(/NATS_CREDS: \/nonexistent\/service.creds cannot be read/);
    expect(() => loadConfig({ API_KEY, NATS_URL: 'http://127.0.0.1:4222' })).toThrow(/NATS_URL: scheme http:/);
  });
});
