import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream } from '@nats-io/jetstream';
import { makeRsaCert } from '../support/certs';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { bareRepo, gitLog } from '../support/services';
import { api, API_KEY, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { readSse } from '../support/sse';

jest.setTimeout(120_000);

describe('operations: live progress, audit log, re-drive, old event versions', () => {
  const stack = useServiceStack(() => ({ API_KEYS: 'controller=controller-key-0123456789' }));
  let nc: NatsConnection;
  const cert = makeRsaCert();
  const remote = bareRepo();
  const body = (cluster: string) => createBody(cluster, remote.url, cert.certPem);
  const untilStatus = (id: string, status: string) =>
    waitFor(`${status}`, async () => {
      const r = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`);
      return r.json?.status === status ? r.json : undefined;
    });

  beforeAll(async () => {
    nc = await connect({ servers: stack.nats.url });
  });
  afterAll(async () => {
    await nc.close();
  });

  it('streams a whole run as Server-Sent Events, and resumes from Last-Event-ID', async () => {
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('sse'));
    const id = created.json.id;
    const live = await readSse(`${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`, { 'x-api-key': API_KEY });
    expect(live.status).toBe(200);
    expect(live.contentType).toMatch(/^text\/event-stream/);
    expect(live.events.map((e) => e.event)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(live.events.every((e) => String(e.data.seq) === e.id)).toBe(true);
    // Once the stream has ended, the run reads as it said (the read-model is not behind it); no cache may keep it.
    const run = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`);
    expect([run.json.status, run.headers.get('cache-control')]).toEqual(['succeeded', 'no-store']);
    const resumed = await readSse(`${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`, {
      'x-api-key': API_KEY,
      'last-event-id': live.events[2].id,
    });
    expect(resumed.events.map((e) => e.event)).toEqual(['CertFetched', 'FullPushed', 'ScaffoldSucceeded']);
    const after = await readSse(`${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`, {
      'x-api-key': API_KEY,
      'last-event-id': live.events[5].id,
    });
    expect(after.events).toEqual([]);
    expect((await fetch(`${stack.svc.base}/api/v1/scaffolds/${id}/events/stream`)).status).toBe(401);
  });

  it('serves the audit log from the stream with type filter, cursor and the caller name (never the key)', async () => {
    const h = { 'x-api-key': 'controller-key-0123456789' };
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('audit'), h);
    await untilStatus(created.json.id, 'succeeded');
    const requested = await api(stack.svc.base, 'GET', '/api/v1/events?type=ScaffoldRequested');
    expect(requested.json.items.map((e: any) => e.data.requested_by)).toEqual(['default', 'controller']);
    expect(JSON.stringify(requested.json)).not.toContain('controller-key-0123456789');
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(stack.svc.base, 'GET', `/api/v1/events?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(...page.json.items);
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(pages).toHaveLength(12);
    expect(pages.every((e, i) => i === 0 || e.seq > pages[i - 1].seq)).toBe(true);
    const future = await api(
      stack.svc.base,
      'GET',
      `/api/v1/events?since=${new Date(Date.now() + 60_000).toISOString()}`,
    );
    expect(future.json.items).toEqual([]);
    expect((await api(stack.svc.base, 'GET', '/api/v1/events?type=Nope')).status).toBe(400);
  });

  /**
   * A run whose infra-pass trigger was lost, as a consumer leader change can lose it: accepted by an API-only
   * replica, then acknowledged on the step's consumer without the step running. Then a service with step workers
   * (and `env`) is started; the run is still queued.
   */
  async function runWithLostTrigger(cluster: string, env: Record<string, string> = {}) {
    const apiOnly = await stack.start({ RUN_STEP_WORKERS: 'false' });
    await stack.svc.stop();
    const created = await api(apiOnly.base, 'POST', '/api/v1/scaffolds', body(cluster));
    const consumer = await jetstream(nc).consumers.get('SCAFFOLD_EVENTS', 'step-infra-pass');
    for (;;) {
      const m = await consumer.next({ expires: 1000 });
      if (!m) break;
      m.ack();
    }
    await apiOnly.stop();
    stack.svc = await stack.start(env);
    return { id: created.json.id as string, commits: gitLog(remote.dir).length };
  }

  it('re-drives a run whose step message was lost, without a second push', async () => {
    const { id, commits } = await runWithLostTrigger('redrive');
    await new Promise((r) => setTimeout(r, 1000));
    expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json.status).toBe('queued');
    const redriven = await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/redrive`);
    expect(redriven.status).toBe(202);
    await untilStatus(id, 'succeeded');
    expect(gitLog(remote.dir)).toHaveLength(commits + 2);
    expect((await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/redrive`)).status).toBe(409);
  });

  it('re-drives by itself a run quiet for longer than its step may be, when its consumer delivered past it', async () => {
    // 20 s: longer than a pass here is silent even on a loaded machine (the default is the step deadline and more).
    const { id, commits } = await runWithLostTrigger('stalled', { STALLED_RUN_SECONDS: '20' });
    await new Promise((r) => setTimeout(r, 5000));
    expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json.status).toBe('queued');
    await untilStatus(id, 'succeeded');
    expect(gitLog(remote.dir)).toHaveLength(commits + 2);
    const events = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
    const redrives = events.filter((e: any) => e.type === 'StepRedriveRequested').map((e: any) => e.data);
    expect(redrives).toEqual([{ step: 'infra-pass', requested_by: 'stall-check' }]);
    const metrics = await (await fetch(`${stack.svc.base}/metrics`)).text();
    expect(metrics).toMatch(/^scaffold_stalled_runs_redriven_total\{step="infra-pass"\} 1$/m);
    expect(metrics).not.toMatch(/^scaffold_stalled_runs_redriven_total\{step="full-pass"\}/m);
  });

  it('replays a stream written with version 1 events after the version 2 change of SealedSecretsReady', async () => {
    const js = jetstream(nc);
    const fixture = readFileSync(join(__dirname, '../fixtures/run-v1.jsonl'), 'utf8').trim().split('\n');
    const runId = JSON.parse(fixture[0]).run_id;
    for (const line of fixture) await js.publish(`scaffold.run.${runId}`, line);
    const run = await waitFor('projection of the v1 run', async () => {
      const r = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${runId}`);
      return r.json?.status === 'succeeded' ? r.json : undefined;
    });
    expect(run).toMatchObject({ cluster_name: 'legacy', infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) });
    const events = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${runId}/events`)).json.items;
    const ready = events.find((e: any) => e.type === 'SealedSecretsReady');
    expect(ready).toMatchObject({ schema_version: 2, data: { source: 'given_certificate', controller: null } });
    expect(JSON.parse(fixture[2]).schema_version).toBe(1);
    expect(JSON.parse(fixture[2]).data).toEqual({ source: 'given_certificate' });
  });
});
