import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { headers, NatsConnection } from '@nats-io/nats-core';
import { parse } from 'yaml';
import { makeRsaCert } from '../support/certs';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { bareRepo, gitLog } from '../support/services';
import { api, API_KEY, eventCount, untilTerminal, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import type { AppConfig } from '../../src/config/config';
import { APP_CONFIG } from '../../src/config/config.module';

jest.setTimeout(120_000);

describe('scaffold service end to end (real NATS JetStream, PostgreSQL, git)', () => {
  const stack = useServiceStack();
  let nc: NatsConnection;
  const cert = makeRsaCert();
  const remote = bareRepo();
  const body = (cluster: string, extra: Record<string, unknown> = {}) => ({
    cluster_name: cluster,
    domain: `${cluster}.example.com`,
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url: remote.url, branch: 'main' },
    target: { sealing_cert_pem: cert.certPem },
    ...extra,
  });
  const natsRequest = async (subject: string, payload: unknown, key = API_KEY) => {
    const h = headers();
    h.set('X-Api-Key', key);
    const m = await nc.request(subject, JSON.stringify(payload), { timeout: 10_000, headers: h });
    return JSON.parse(m.string());
  };
  const streamCount = () => eventCount(stack.svc);

  beforeAll(async () => {
    nc = await connect({ servers: stack.nats.url });
  });

  afterAll(async () => {
    await nc?.close();
  });

  it('runs both passes: two commits, the first without secrets, status transitions, history, NATS equal to REST', async () => {
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('alpha'));
    expect(created.status).toBe(202);
    expect(created.headers.get('location')).toBe(`/api/v1/scaffolds/${created.json.id}`);
    expect(created.json).toMatchObject({
      status: 'queued',
      step: 'infra-pass',
      gitops_path: 'clusters/alpha',
      repo_url: remote.url,
      branch: 'main',
      infra_commit: null,
    });
    const id = created.json.id;
    const immediately = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`);
    expect(immediately.status).toBe(200);

    const done = await untilTerminal(stack.svc.base, id);
    expect(done.status).toBe('succeeded');
    expect(done.finished_at).toBeTruthy();
    // Both passes' working copies are gone, and the run's folder with them.
    expect(readdirSync(stack.svc.app.get<AppConfig>(APP_CONFIG).steps.workDir)).not.toContain(id);

    const log = gitLog(remote.dir);
    expect(log).toHaveLength(3);
    expect(log[1]).toContain(done.infra_commit);
    expect(log[0]).toContain(done.full_commit);
    const show = (rev: string, path: string) =>
      execFileSync('git', ['--git-dir', remote.dir, 'ls-tree', '-r', '--name-only', rev, path], { encoding: 'utf8' });
    const infraFiles = show(done.infra_commit, 'clusters/alpha');
    expect(infraFiles).toContain('clusters/alpha/infrastructure/external-dns.yaml');
    expect(infraFiles).not.toContain('database');
    const secretsInInfra = spawnSync(
      'git',
      ['--git-dir', remote.dir, 'grep', '-l', '-E', 'kind: (Secret|SealedSecret)', done.infra_commit],
      { encoding: 'utf8' },
    );
    expect(secretsInInfra.status).toBe(1); // git grep: no match
    expect(secretsInInfra.stdout).toBe('');
    expect(show(done.full_commit, 'clusters/alpha')).toContain('clusters/alpha/database/postgresql-credentials.yaml');
    const message = execFileSync('git', ['--git-dir', remote.dir, 'log', '-1', '--format=%B', done.full_commit], {
      encoding: 'utf8',
    });
    expect(message).toContain(`Scaffold-Run: ${id}`);
    expect(message).toContain('Scaffold-Pass: full');

    const history = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/events`);
    expect(history.json.items.map((e: any) => e.type)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(history.json.items.every((e: any, i: number, all: any[]) => i === 0 || e.seq > all[i - 1].seq)).toBe(true);
    expect(history.json.items[0]).toMatchObject({
      // Version 2 records the run's plan (#50).
      schema_version: 2,
      data: { requested_by: 'default', target: { kind: 'sealing_cert' } },
    });
    expect(JSON.stringify(history.json)).not.toContain('BEGIN CERTIFICATE');

    const logs = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`);
    expect(logs.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(logs.text).toMatch(/\[infra-pass\] pushed [0-9a-f]{40} to main/);

    const rest = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`);
    await waitFor('projection', async () =>
      (await api(stack.svc.base, 'GET', `/api/v1/scaffolds?status=succeeded`)).json.items.length > 0 ? true : undefined,
    );
    expect(await natsRequest('scaffolds.v1.get', { id })).toEqual(rest.json);
    expect(await natsRequest('scaffolds.v1.events', { id })).toEqual(history.json);
    expect(await natsRequest('scaffolds.v1.list', { status: 'succeeded' })).toEqual(
      (await api(stack.svc.base, 'GET', '/api/v1/scaffolds?status=succeeded')).json,
    );
    expect((await natsRequest('scaffolds.v1.logs', { id })).log).toBe(logs.text);
  });

  it('creates over NATS, and the same Idempotency-Key returns the same run', async () => {
    const h = headers();
    h.set('X-Api-Key', API_KEY);
    h.set('Idempotency-Key', 'ctrl-req-42');
    const first = JSON.parse(
      (await nc.request('scaffolds.v1.create', JSON.stringify(body('beta')), { headers: h, timeout: 10_000 })).string(),
    );
    const again = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('beta'), {
      'idempotency-key': 'ctrl-req-42',
    });
    expect(again.status).toBe(202);
    expect(again.json.id).toBe(first.id);
    expect((await untilTerminal(stack.svc.base, first.id)).status).toBe('succeeded');
    const events = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${first.id}/events`);
    expect(events.json.items.filter((e: any) => e.type === 'ScaffoldRequested')).toHaveLength(1);
  });

  it('redelivers old events to a recreated consumer without pushing or appending again', async () => {
    const commitsBefore = gitLog(remote.dir).length;
    const eventsBefore = await streamCount();
    await stack.svc.stop();
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(nc);
    for (const c of ['step-infra-pass', 'step-full-pass', 'step-sealed-secrets-wait', 'step-cert-fetch'])
      await jsm.consumers.delete('SCAFFOLD_EVENTS', c);
    stack.svc = await stack.start();
    await waitFor('the recreated consumers to drain', async () => {
      const infos = await Promise.all(
        ['step-infra-pass', 'step-full-pass'].map((c) => jsm.consumers.info('SCAFFOLD_EVENTS', c)),
      );
      return infos.every((i) => i.num_pending === 0 && i.num_ack_pending === 0) ? true : undefined;
    });
    expect(gitLog(remote.dir)).toHaveLength(commitsBefore);
    expect(await streamCount()).toBe(eventsBefore);
  });

  it('runs the SOPS backend: infrastructure, then the full pass at once, encrypted for the age recipients', async () => {
    const cluster = ageIdentity();
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', {
      ...body('sops-e2e'),
      secrets_backend: 'sops',
      target: { age_recipients: [cluster.recipient] },
    });
    expect(created.status).toBe(202);
    const done = await untilTerminal(stack.svc.base, created.json.id);
    expect(done.status).toBe('succeeded');
    const events = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items;
    expect(events.map((e: any) => e.type)).toEqual([
      'ScaffoldRequested',
      'InfraPushed',
      'FullPushed',
      'ScaffoldSucceeded',
    ]);
    expect(events[0].data.target).toEqual({ kind: 'age_recipients', recipients: [cluster.recipient] });
    const file = execFileSync(
      'git',
      ['--git-dir', remote.dir, 'show', `${done.full_commit}:clusters/sops-e2e/database/postgresql-credentials.yaml`],
      { encoding: 'utf8' },
    );
    const opened = sopsOpen(parse(file), cluster.keyFile);
    expect(opened.macOk).toBe(true);
    expect(opened.plain.stringData.password).toHaveLength(40);
    const rules = execFileSync('git', ['--git-dir', remote.dir, 'show', `${done.full_commit}:.sops.yaml`], {
      encoding: 'utf8',
    });
    expect(rules).toContain('^(?:clusters/sops-e2e/apps|clusters/sops-e2e/database)/[^/]+\\.ya?ml$');
    const infraFiles = execFileSync(
      'git',
      ['--git-dir', remote.dir, 'ls-tree', '-r', '--name-only', done.infra_commit],
      { encoding: 'utf8' },
    );
    expect(infraFiles).not.toContain('.sops.yaml');
  });

  it.each([
    [
      'sops without recipients',
      { secrets_backend: 'sops', target: { sealing_cert_pem: 'x' } },
      /^target: secrets_backend sops needs target.age_recipients/,
    ],
    [
      'recipients without sops',
      { target: { age_recipients: ['age1qwwzsz6z2mmu6hpmjt2he7nepmnhutmhehvkva7l5zy5xzf08d5s5n4d6n'] } },
      /^target: target.age_recipients needs secrets_backend sops/,
    ],
    [
      'a private key as recipient',
      { secrets_backend: 'sops', target: { age_recipients: ['AGE-SECRET-KEY-1ABC'] } },
      /^target.age_recipients.0: must be an age public key/,
    ],
    ['an unknown backend', { secrets_backend: 'vault' }, /^secrets_backend:/],
  ])('refuses %s', async (_what, patch, message) => {
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', { ...body('sops-bad'), ...patch });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(message);
  });

  it('fails a run with a clear reason when the branch does not exist', async () => {
    const r = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      body('gamma', { repo: { url: remote.url, branch: 'no-such-branch' } }),
    );
    const done = await untilTerminal(stack.svc.base, r.json.id);
    expect(done.status).toBe('failed');
    expect(done.message).toMatch(/infra-pass failed: the branch does not exist on the remote/);
    const types = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}/events`)).json.items.map(
      (e: any) => e.type,
    );
    expect(types).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
  });

  it('answers 409 while a run for the same repo and cluster is active, and cancels at the next step boundary', async () => {
    const apiOnly = await stack.start({ RUN_STEP_WORKERS: 'false' });
    await stack.svc.stop(); // no step workers anywhere: the run stays queued
    try {
      const first = await api(apiOnly.base, 'POST', '/api/v1/scaffolds', body('delta'));
      await waitFor('the read-model row', async () =>
        (await api(apiOnly.base, 'GET', '/api/v1/scaffolds?status=queued')).json.items.some(
          (i: any) => i.id === first.json.id,
        )
          ? true
          : undefined,
      );
      const second = await api(apiOnly.base, 'POST', '/api/v1/scaffolds', body('delta'));
      expect(second.status).toBe(409);
      expect(second.json.error.code).toBe('run_active');
      // Another spelling of the same repository is the same repository.
      const respelt = await api(
        apiOnly.base,
        'POST',
        '/api/v1/scaffolds',
        body('delta', { repo: { url: `${remote.url.replace(/\.git$/, '')}/`, branch: 'main' } }),
      );
      expect([respelt.status, respelt.json.error.code]).toEqual([409, 'run_active']);
      const cancel = await api(apiOnly.base, 'POST', `/api/v1/scaffolds/${first.json.id}/cancel`);
      expect(cancel.status).toBe(202);
      stack.svc = await stack.start();
      const done = await untilTerminal(stack.svc.base, first.json.id);
      expect(done.status).toBe('cancelled');
      expect((await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${first.json.id}/cancel`)).status).toBe(409);
      expect(gitLog(remote.dir).join('\n')).not.toContain('delta');
    } finally {
      await apiOnly.stop();
    }
  });

  describe('edge checks (the full catalogue is test/reliability/bad-input.spec.ts)', () => {
    it('refuses file:// when it is not allowed', async () => {
      const strict = await stack.start({ RUN_STEP_WORKERS: 'false', GIT_ALLOWED_SCHEMES: 'https,ssh' });
      try {
        const r = await api(strict.base, 'POST', '/api/v1/scaffolds', body('e20'));
        expect(r.status).toBe(400);
        expect(r.json.error.message).toMatch(/repo.url: scheme "file" is not allowed/);
      } finally {
        await strict.stop();
      }
    });

    it('401 without or with a wrong key, on REST and NATS; /health needs none', async () => {
      for (const key of [undefined, 'wrong-key-wrong-key-wrong']) {
        const r = await api(
          stack.svc.base,
          'GET',
          '/api/v1/scaffolds',
          undefined,
          key === undefined ? { 'x-api-key': '' } : { 'x-api-key': key },
        );
        expect(r.status).toBe(401);
        expect(r.json.error.code).toBe('unauthorized');
        expect((await natsRequest('scaffolds.v1.list', {}, key ?? '')).error.code).toBe('unauthorized');
      }
      const health = await fetch(`${stack.svc.base}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', nats: 'up', postgres: 'up' });
      // Idle connections are kept longer than a load balancer's (and undici's) own, so the client closes first.
      expect(health.headers.get('keep-alive')).toBe('timeout=65');
    });

    it('404 for unknown and malformed run ids', async () => {
      expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds/00000000-0000-4000-8000-000000000000')).status).toBe(
        404,
      );
      expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds/..%2F..%2Fetc')).status).toBe(404);
      expect((await natsRequest('scaffolds.v1.get', { id: 'nope' })).error.code).toBe('not_found');
    });
  });
});
