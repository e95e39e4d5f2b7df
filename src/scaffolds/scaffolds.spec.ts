import { createHash } from 'node:crypto';
import { InMemoryEventStore, InMemoryIdempotencyKeys, InMemoryRunInputs, InMemoryRunLogStore } from '#libs/event-store';
import type { ScaffoldRequestedData } from '#libs/events';
import { IN_PROCESS_GENERATOR } from '#libs/generator';
import { localGitWorkspaces } from '../git/git.module';
import { RunCommands } from '#libs/run-decider';
import { SEALING_CERT_INPUT, type SuppliedCredentialsSource } from '#libs/steps';
import { makeRsaCert } from '../../test/support/certs';
import { tempDir } from '../../test/support/files';
import { writeSuppliedReference } from '../../test/support/reference-repos';
import { ApiError } from '../common/api-error';
import { AppConfig, loadConfig } from '../config/config';
import type { RunReadModel } from '../projection/run-read-model';
import { Quotas } from './quotas';
import { RequestChecks } from './request-checks';
import { requestDigest, ScaffoldCommands } from './scaffold-commands';
import { ScaffoldPreview } from './scaffold-preview';
import { LiveRuns } from './live-runs';
import { ScaffoldQueries } from './scaffold-queries';

/** The scaffolds providers on the in-memory event store: given events, when a command, then events. */
const alice = { name: 'alice', role: 'operator' } as const;
const bob = { name: 'bob', role: 'operator' } as const;
const admin = { name: 'ops', role: 'admin' } as const;
/** Quotas far above what a unit test reaches; their own tests are in test/service/abuse.spec.ts. */
const quotasFor = (readModel: RunReadModel) =>
  new Quotas(readModel, loadConfig({ API_KEY: 'unit-test-key-0123456789' }));
const UNIT_ENV = {
  API_KEY: 'unit-test-key-0123456789',
  REGISTRY_SERVER: 'r.example.com',
  REGISTRY_USERNAME: 'u',
  REGISTRY_PASSWORD: 'unit-registry-password',
};

/** The three providers as ScaffoldsModule wires them, over one store, read-model and set of checks. */
function scaffolds(
  store: InMemoryEventStore,
  readModel: RunReadModel,
  config: AppConfig,
  quotas: Quotas,
  inputs = new InMemoryRunInputs(),
  credentials?: SuppliedCredentialsSource,
) {
  const checks = new RequestChecks(config, readModel, credentials);
  return {
    commands: new ScaffoldCommands(
      store,
      new RunCommands(store),
      inputs,
      readModel,
      quotas,
      new InMemoryIdempotencyKeys(),
      checks,
    ),
    // Not following the log (never bootstrapped): every GET reads the read-model, as these specs check it.
    queries: new ScaffoldQueries(store, new InMemoryRunLogStore(), readModel, new LiveRuns(store)),
    preview: new ScaffoldPreview(config, quotas, IN_PROCESS_GENERATOR, localGitWorkspaces(config), checks),
  };
}

describe('the scaffolds providers (in-memory event store)', () => {
  const cert = makeRsaCert();
  let store: InMemoryEventStore;
  let inputs: InMemoryRunInputs;
  let service: ReturnType<typeof scaffolds>;
  /** The read-model is empty here (nothing projects): GET falls back to the stream, as after a fresh POST. */
  const emptyReadModel = {
    byId: async () => null,
    activeFor: async () => null,
    clusterOwner: async () => undefined,
    page: async () => [],
    active: async () => [],
    stuck: async () => [],
    usage: async () => ({ active: 0, createdSince: 0 }),
  } as unknown as RunReadModel;
  const quotas = quotasFor(emptyReadModel);
  const body = (cluster = 'unit') => ({
    cluster_name: cluster,
    domain: `${cluster}.example.com`,
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url: 'https://git.example.com/fleet.git', branch: 'main' },
    target: { sealing_cert_pem: cert.certPem },
  });
  const types = async (id: string) => (await store.readRun(id)).events.map((e) => e.type);
  const status = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: ApiError) => e.status,
    );

  beforeEach(() => {
    store = new InMemoryEventStore();
    inputs = new InMemoryRunInputs();
    service = scaffolds(store, emptyReadModel, loadConfig(UNIT_ENV), quotas, inputs);
  });

  it('refuses, before appending, a reference with pull secrets when the steps here have no registry settings', async () => {
    const { REGISTRY_PASSWORD: _omitted, ...withoutRegistry } = UNIT_ENV;
    const bare = scaffolds(store, emptyReadModel, loadConfig(withoutRegistry), quotas, inputs);
    await expect(bare.commands.create(body(), alice)).rejects.toMatchObject({
      status: 422,
      code: 'registry_missing',
      message: expect.stringContaining(
        '(platform/registry-credentials) are built from REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD',
      ),
    });
    expect(await store.readRange({ limit: 10 })).toMatchObject({ events: [] });
    // A Job's registry settings are its own: the service with EXECUTOR=kubernetes does not refuse.
    const withJobs = scaffolds(
      store,
      emptyReadModel,
      loadConfig({ ...withoutRegistry, EXECUTOR: 'kubernetes', RUNNER_SERVICE_URL: 'http://scaffolder.test:8080' }),
      quotas,
      inputs,
    );
    expect((await withJobs.commands.create(body(), alice)).created).toBe(true);
  });

  it('records ScaffoldRequested with the caller and the certificate fingerprint; the PEM goes to the run inputs only', async () => {
    const { run, created } = await service.commands.create(body(), alice);
    expect(created).toBe(true);
    expect(run).toMatchObject({ status: 'queued', step: 'infra-pass', gitops_path: 'clusters/unit' });
    const [event] = (await store.readRun(run.id)).events;
    expect(event).toMatchObject({
      type: 'ScaffoldRequested',
      data: { requested_by: 'alice', target: { kind: 'sealing_cert' } },
    });
    expect(JSON.stringify(event)).not.toContain('BEGIN CERTIFICATE');
    expect((await inputs.get(run.id, SEALING_CERT_INPUT))?.trim()).toBe(cert.certPem.trim());
    expect(await service.queries.get(run.id, admin)).toEqual(run);
  });

  it('returns the same run for the same Idempotency-Key of the same caller, a new one for another caller', async () => {
    const first = await service.commands.create(body(), alice, 'key-1');
    const again = await service.commands.create(body(), alice, 'key-1');
    expect(again).toEqual({ run: first.run, created: false });
    expect(await types(first.run.id)).toEqual(['ScaffoldRequested']);
    expect((await service.commands.create(body('other'), bob, 'key-1')).run.id).not.toBe(first.run.id);
    // The same key with another body is refused, and nothing is appended.
    await expect(service.commands.create(body('changed'), alice, 'key-1')).rejects.toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });
    expect(await types(first.run.id)).toEqual(['ScaffoldRequested']);
  });

  it('records strict (true unless the body says false) and replace; a retry of a request recorded before strict existed is the same request', async () => {
    const strictRun = await service.commands.create(body('strict'), alice, 'key-strict');
    const replaced = { ...body('loose'), strict: false, replace: { 'main-cluster': 'loose' } };
    const looseRun = await service.commands.create(replaced, alice);
    const recorded = async (id: string) => (await store.readRun(id)).events[0].data as ScaffoldRequestedData;
    expect(await recorded(strictRun.run.id)).toMatchObject({ strict: true });
    expect(await recorded(strictRun.run.id)).not.toHaveProperty('replace');
    expect(await recorded(looseRun.run.id)).toMatchObject({ strict: false, replace: { 'main-cluster': 'loose' } });
    // The same key: `strict: true` said or not is the same request, `strict: false` another one.
    expect((await service.commands.create({ ...body('strict'), strict: true }, alice, 'key-strict')).created).toBe(
      false,
    );
    await expect(
      service.commands.create({ ...body('strict'), strict: false }, alice, 'key-strict'),
    ).rejects.toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    const { strict: _strict, ...beforeStrict } = await recorded(strictRun.run.id);
    expect(requestDigest(beforeStrict)).toBe(requestDigest(await recorded(strictRun.run.id)));
  });

  it('gives a random run id for an Idempotency-Key: nobody who knows the key can compute it', async () => {
    const { run } = await service.commands.create(body('random-id'), alice, 'key-2');
    const derived = createHash('sha256').update('alice\0key-2').digest('hex');
    expect(run.id.replaceAll('-', '')).not.toContain(derived.slice(0, 8));
    expect(run.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('appends nothing for a bad request', async () => {
    await expect(service.commands.create({ ...body(), cluster_name: 'Not_A_Name' }, alice)).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/^cluster_name:/),
    });
    await expect(service.commands.create(body(), alice, '')).rejects.toMatchObject({ status: 400 });
    expect(await store.lastSeq()).toBe(0);
  });

  it("refuses another key's cluster folder before appending (admins act for its owner, recorded as cluster_owner)", async () => {
    const owned = {
      ...emptyReadModel,
      clusterOwner: async (repo: string, cluster: string) =>
        cluster === 'unit' && repo === 'https://git.example.com/fleet.git' ? 'alice' : undefined,
    };
    const guarded = scaffolds(store, owned as unknown as RunReadModel, loadConfig(UNIT_ENV), quotas, inputs);
    const refused = await guarded.commands.create(body(), bob).catch((e) => e);
    expect([refused.status, refused.code, refused.message]).toEqual([
      403,
      'cluster_owned_elsewhere',
      'cluster unit in this repository belongs to another key',
    ]);
    expect(await guarded.preview.preview(body(), bob).catch((e) => e.code)).toBe('cluster_owned_elsewhere');
    expect(await store.lastSeq()).toBe(0);
    const dataOf = async (id: string) =>
      ((await store.readRun(id)).events[0] as { data: Record<string, unknown> }).data;
    expect(await dataOf((await guarded.commands.create(body(), admin)).run.id)).toMatchObject({
      requested_by: 'ops',
      cluster_owner: 'alice',
    });
    expect(await dataOf((await guarded.commands.create(body(), alice)).run.id)).not.toHaveProperty('cluster_owner');
  });

  it('cancels a running run once, refuses a finished or unknown one', async () => {
    const { run } = await service.commands.create(body(), alice);
    await service.commands.cancel(run.id, admin);
    await service.commands.cancel(run.id, admin);
    expect(await types(run.id)).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested']);
    expect(await status(service.commands.cancel('00000000-0000-4000-8000-000000000000', admin))).toBe(404);
    expect(await status(service.commands.cancel('not-a-uuid', admin))).toBe(404);
  });

  it('re-drives the current step, and serves the run log and the audit log', async () => {
    const { run } = await service.commands.create(body(), alice);
    await service.commands.redrive(run.id, admin);
    expect(await types(run.id)).toEqual(['ScaffoldRequested', 'StepRedriveRequested']);
    expect(await service.queries.logs(run.id, admin)).toBe('');
    const audit = await service.queries.allEvents({ type: 'StepRedriveRequested' }, admin);
    expect(audit.items.map((e) => e.type)).toEqual(['StepRedriveRequested']);
    expect(await status(service.queries.allEvents({ type: 'Nope' }, admin))).toBe(400);
  });
});

describe('the scaffolds providers: credentials only their issuer can create', () => {
  const cert = makeRsaCert();
  const template = tempDir('svc-supplied');
  writeSuppliedReference(template);
  const emptyReadModel = {
    activeFor: async () => null,
    clusterOwner: async () => undefined,
    usage: async () => ({ active: 0, createdSince: 0 }),
  } as unknown as RunReadModel;
  const quotas = quotasFor(emptyReadModel);
  const TOKEN = 'IssuedByTheDnsProvider-0042';
  const held: Record<string, Record<string, string>> = {
    'capi-clusters/complete': { 'data/dns-provider/api-token': TOKEN },
    'capi-clusters/incomplete': { 'data/other/api-token': 'x' },
  };
  const source = {
    read: async (ref: { namespace: string; name: string }) =>
      held[`${ref.namespace}/${ref.name}`] ?? Promise.reject(new Error('not found')),
  };
  const make = (executor: 'local' | 'kubernetes') => {
    const store = new InMemoryEventStore();
    const config = loadConfig({
      ...UNIT_ENV,
      TEMPLATE_DIR: template,
      EXECUTOR: executor,
      RUNNER_SERVICE_URL: 'http://scaffolder.test:8080',
      SECRET_NAMESPACES: 'capi-clusters',
    });
    return {
      store,
      ...scaffolds(
        store,
        emptyReadModel,
        config,
        quotas,
        new InMemoryRunInputs(),
        executor === 'kubernetes' ? source : undefined,
      ),
    };
  };
  const body = (extra: object = {}) => ({
    cluster_name: 'sup',
    domain: 'sup.example.com',
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url: 'https://git.example.com/fleet.git' },
    target: { sealing_cert_pem: cert.certPem },
    ...extra,
  });

  it('refuses at once, naming the keys, when the request names no Secret or one that lacks them; appends nothing', async () => {
    const { store, commands } = make('kubernetes');
    await expect(commands.create(body(), alice)).rejects.toMatchObject({
      status: 422,
      code: 'credentials_missing',
      message: expect.stringContaining('data/dns-provider/api-token'),
    });
    const incomplete = commands.create(
      body({ credentials_secret: { namespace: 'capi-clusters', name: 'incomplete' } }),
      alice,
    );
    await expect(incomplete).rejects.toMatchObject({
      status: 422,
      message: 'credentials_secret: Secret capi-clusters/incomplete lacks data/dns-provider/api-token',
    });
    expect(await store.lastSeq()).toBe(0);
  });

  it('records only the reference of a Secret that holds them, or that cannot be read yet', async () => {
    const { store, commands } = make('kubernetes');
    for (const name of ['complete', 'not-there-yet']) {
      const { run } = await commands.create(
        body({ cluster_name: `sup-${name}`, credentials_secret: { namespace: 'capi-clusters', name } }),
        alice,
      );
      const [event] = (await store.readRun(run.id)).events;
      expect(event.type === 'ScaffoldRequested' && event.data.credentials_secret).toEqual({
        namespace: 'capi-clusters',
        name,
      });
      expect(JSON.stringify(event)).not.toContain(TOKEN);
    }
  });

  it('says where supplied credentials come from when the process cannot reach the management cluster', async () => {
    const { commands } = make('local');
    await expect(commands.create(body(), alice)).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining('access to the management cluster'),
    });
    await expect(
      commands.create(body({ credentials_secret: { namespace: 'capi-clusters', name: 'complete' } }), alice),
    ).rejects.toMatchObject({
      status: 422,
      code: 'unsupported_credentials_secret',
    });
  });
});
