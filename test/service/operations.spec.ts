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

  it('re-drives a run whose step message was lost, without a second push', async () => {
    const apiOnly = await stack.start({ RUN_STEP_WORKERS: 'false' });
    await stack.svc.stop();
    const created = await api(apiOnly.base, 'POST', '/api/v1/scaffolds', body('redrive'));
    const id = created.json.id;
    // Lose the trigger: acknowledge it on the infra consumer without running the step.
    const js = jetstream(nc);
    const consumer = await js.consumers.get('SCAFFOLD_EVENTS', 'step-infra-pass');
    for (;;) {
      const m = await consumer.next({ expires: 1000 });
      if (!m) break;
      m.ack();
    }
    stack.svc = await stack.start();
    await new Promise((r) => setTimeout(r, 1000));
    expect((await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json.status).toBe('queued');
    const commits = gitLog(remote.dir).length;
    const redriven = await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/redrive`);
    expect(redriven.status).toBe(202);
    await untilStatus(id, 'succeeded');
    expect(gitLog(remote.dir)).toHaveLength(commits + 2);
    expect((await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/redrive`)).status).toBe(409);
    await apiOnly.stop();
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
