import { InMemoryEventStore, InMemoryRunInputs, InMemoryRunLogStore } from '../../libs/event-store/src';
import { SEALING_CERT_INPUT } from '../../libs/steps/src';
import { makeRsaCert } from '../../test/support/certs';
import { ApiError } from '../common/api-error';
import { loadConfig } from '../config/config';
import type { RunReadModel } from '../projection/run-read-model';
import { ScaffoldsService } from './scaffolds.service';

/** The application service on the in-memory event store: given events, when a command, then events. */
describe('ScaffoldsService (in-memory event store)', () => {
  const cert = makeRsaCert();
  let store: InMemoryEventStore;
  let inputs: InMemoryRunInputs;
  let service: ScaffoldsService;
  /** The read-model is empty here (nothing projects): GET falls back to the stream, as after a fresh POST. */
  const emptyReadModel = { byId: async () => null, activeFor: async () => null, page: async () => [], active: async () => [], stuck: async () => [] } as unknown as RunReadModel;
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
    service = new ScaffoldsService(store, inputs, new InMemoryRunLogStore(), emptyReadModel, loadConfig({ API_KEY: 'unit-test-key-0123456789' }));
  });

  it('records ScaffoldRequested with the caller and the certificate fingerprint; the PEM goes to the run inputs only', async () => {
    const { run, created } = await service.create(body(), 'alice');
    expect(created).toBe(true);
    expect(run).toMatchObject({ status: 'queued', step: 'infra-pass', gitops_path: 'clusters/unit' });
    const [event] = (await store.readRun(run.id)).events;
    expect(event).toMatchObject({ type: 'ScaffoldRequested', data: { requested_by: 'alice', target: { kind: 'sealing_cert' } } });
    expect(JSON.stringify(event)).not.toContain('BEGIN CERTIFICATE');
    expect((await inputs.get(run.id, SEALING_CERT_INPUT))?.trim()).toBe(cert.certPem.trim());
    expect(await service.get(run.id)).toEqual(run);
  });

  it('returns the same run for the same Idempotency-Key of the same caller, a new one for another caller', async () => {
    const first = await service.create(body(), 'alice', 'key-1');
    const again = await service.create(body(), 'alice', 'key-1');
    expect(again).toEqual({ run: first.run, created: false });
    expect(await types(first.run.id)).toEqual(['ScaffoldRequested']);
    expect((await service.create(body('other'), 'bob', 'key-1')).run.id).not.toBe(first.run.id);
  });

  it('appends nothing for a bad request', async () => {
    await expect(service.create({ ...body(), cluster_name: 'Not_A_Name' }, 'alice')).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^cluster_name:/) });
    await expect(service.create(body(), 'alice', '')).rejects.toMatchObject({ status: 400 });
    expect(await store.lastSeq()).toBe(0);
  });

  it('cancels a running run once, refuses a finished or unknown one', async () => {
    const { run } = await service.create(body(), 'alice');
    await service.cancel(run.id, 'ops');
    await service.cancel(run.id, 'ops');
    expect(await types(run.id)).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested']);
    expect(await status(service.cancel('00000000-0000-4000-8000-000000000000', 'ops'))).toBe(404);
    expect(await status(service.cancel('not-a-uuid', 'ops'))).toBe(404);
  });

  it('re-drives the current step, and serves the run log and the audit log', async () => {
    const { run } = await service.create(body(), 'alice');
    await service.redrive(run.id, 'ops');
    expect(await types(run.id)).toEqual(['ScaffoldRequested', 'StepRedriveRequested']);
    expect(await service.logs(run.id)).toBe('');
    const audit = await service.allEvents({ type: 'StepRedriveRequested' });
    expect(audit.items.map((e) => e.type)).toEqual(['StepRedriveRequested']);
    expect(await status(service.allEvents({ type: 'Nope' }))).toBe(400);
  });
});
