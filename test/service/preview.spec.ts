import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { bareRepo, gitLog } from '../support/services';
import { api, API_KEY, eventCount } from '../support/service';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

describe('preview: what a run would change, over REST and NATS, with nothing appended or pushed', () => {
  const stack = useServiceStack();
  const cert = makeRsaCert();
  const remote = bareRepo();
  const body = createBody('preview-one', remote.url, cert.certPem);

  it('answers the full pass report with sealed values masked, and leaves the stream, the read-model and the remote as they were', async () => {
    const events = await eventCount(stack.svc);
    const log = gitLog(remote.dir);
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', body);
    expect(r.status).toBe(200);
    expect(r.json.pass).toBe('full');
    expect(r.json.summary).toMatchObject({
      cluster_name: 'preview-one',
      gitops_path: 'clusters/preview-one',
      pass: 'full',
    });
    const credentials = r.json.changes.find(
      (c: any) => c.path === 'clusters/preview-one/database/postgresql-credentials.yaml',
    );
    expect(credentials).toMatchObject({ change: 'added' });
    expect(credentials.diff).toContain('encryptedData: "<sealed: 4 keys>"');
    expect(r.json.summary.credential_plan).toContainEqual({
      namespace: 'data',
      name: 'postgresql-credentials',
      key: 'url',
      class: 'derived',
      from: ['data/postgresql-credentials'],
    });
    expect(r.text).not.toMatch(/Ag[A-Za-z0-9+/]{100}/);
    expect(r.text).not.toContain('TestRegistryPassword-5f6e7d8c9b');
    expect(await eventCount(stack.svc)).toBe(events);
    expect(gitLog(remote.dir)).toEqual(log);
    expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds')).json.items).toEqual([]);

    const nc = await connect({ servers: stack.nats.url });
    try {
      const h = headers();
      h.set('X-Api-Key', API_KEY);
      const m = await nc.request('scaffolds.v1.preview', JSON.stringify(body), { headers: h, timeout: 60_000 });
      expect(m.headers?.get('Status-Code')).toBe('200');
      const overNats = JSON.parse(m.string());
      expect(overNats.changes.map((c: any) => c.path)).toEqual(r.json.changes.map((c: any) => c.path));
    } finally {
      await nc.close();
    }
    expect(await eventCount(stack.svc)).toBe(events);
  });

  it('validates the body as a create request does, and needs the API key', async () => {
    const bad = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', { ...body, cluster_name: 'Bad_Name' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/^cluster_name:/);
    expect(
      (await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', body, { 'x-api-key': 'wrong-key-0123456789' }))
        .status,
    ).toBe(401);
    const missingBranch = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', {
      ...body,
      repo: { url: remote.url, branch: 'nope' },
    });
    expect(missingBranch.status).toBe(422);
    expect(missingBranch.json.error.code).toBe('preview_failed');
  });
});
