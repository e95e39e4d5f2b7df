import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { readTree } from '../support/files';
import { CountingListener, eventually, processesWith, useListeners } from '../support/listeners';
import { createBody } from '../support/run-fixtures';
import { bareRepo, gitLog, pushAsAnotherWriter, TestDatabase, TestNats } from '../support/services';
import { api, eventCount, natsApi } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

const QUOTA_KEY = 'quota-key-0123456789abcdef';
const DEADLINE_KEY = 'deadline-key-0123456789abcdef';

/** A fleet repository whose `base/` (which the shipped reference's apps layer builds from) lists `entry`. */
function fleetWithRemoteBase(entry: string) {
  const remote = bareRepo();
  const base = Object.fromEntries(
    Object.entries(readTree(join(SHIPPED_TEMPLATE, 'base'))).map(([rel, text]) => [`base/${rel}`, text]),
  );
  base['base/kustomization.yaml'] = base['base/kustomization.yaml'].replace(
    /^resources:\n/m,
    `resources:\n  - ${entry}\n`,
  );
  pushAsAnotherWriter(remote.dir, base, 'base with a remote resource');
  return remote;
}

describe('preview: nothing leaves the machine, and a preview costs what a create costs', () => {
  const stack = useServiceStack(() => ({
    API_KEYS: `quota:operator:${QUOTA_KEY}`,
    MAX_PREVIEWS_PER_MINUTE_PER_KEY: '3',
  }));
  const cert = makeRsaCert();
  const listeners = useListeners();

  it('a remote resource in the target repository: 422 naming the file, no connection, nothing appended or pushed', async () => {
    for (const entry of [
      `http://127.0.0.1:${listeners.http.port}/x.yaml`,
      `git::http://127.0.0.1:${listeners.tcp.port}/org/base.git//deploy?ref=main`,
    ]) {
      const remote = fleetWithRemoteBase(entry);
      const events = await eventCount(stack.svc);
      const log = gitLog(remote.dir);
      const r = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds/preview',
        createBody('remote-base', remote.url, cert.certPem),
      );
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('preview_failed');
      expect(r.json.error.message).toBe(
        `base/kustomization.yaml: resources entry ${JSON.stringify(entry)} is a remote resource, which kustomize would fetch; only paths in the repository are built`,
      );
      expect(await eventCount(stack.svc)).toBe(events);
      expect(gitLog(remote.dir)).toEqual(log);
    }
    expect(listeners.http.connections).toBe(0);
    expect(listeners.tcp.connections).toBe(0);
  });

  it('MAX_PREVIEWS_PER_MINUTE_PER_KEY: the next preview of the key is 429 too_many_previews with Retry-After, on REST and NATS; other keys go on', async () => {
    const body = { ...createBody('quota', bareRepo().url, cert.certPem) };
    body.repo = { ...body.repo, branch: 'no-such-branch' };
    for (let i = 0; i < 3; i++)
      expect(
        (await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', body, { 'x-api-key': QUOTA_KEY })).status,
      ).toBe(422);
    const refused = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', body, { 'x-api-key': QUOTA_KEY });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('too_many_previews');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const nats = await natsApi(stack.nats.url);
    try {
      const overNats = await nats.request('scaffolds.v1.preview', body, QUOTA_KEY);
      expect(overNats.status).toBe(429);
      expect(overNats.json.error.code).toBe('too_many_previews');
      expect(Number(overNats.retryAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      await nats.close();
    }
    expect((await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', body)).status).toBe(422);
  });
});

describe('preview deadline: a server that never answers, and a service that dies mid-preview, leave no git or ssh behind', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let svc: ServiceProcess;
  let silent: CountingListener;
  const cert = makeRsaCert();
  const previewOf = (url: string) =>
    api(svc.base, 'POST', '/api/v1/scaffolds/preview', createBody('deadline', url, cert.certPem), {
      'x-api-key': DEADLINE_KEY,
    }).catch((e) => ({ status: 0, error: e }) as any);
  const gone = (marker: string) =>
    eventually(() => processesWith(marker).length === 0 && silent.openSockets === 0, 5_000);
  const leftovers = () => {
    const work = svc.env.WORK_DIR;
    const previews = existsSync(join(work, 'preview')) ? readdirSync(join(work, 'preview')) : [];
    const partial = existsSync(join(work, 'repo-cache'))
      ? readdirSync(join(work, 'repo-cache')).filter((f) => f.endsWith('.partial'))
      : [];
    return [...previews, ...partial];
  };

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    silent = await CountingListener.silent();
    svc = await ServiceProcess.create({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      API_KEYS: `deadline:operator:${DEADLINE_KEY}`,
      PREVIEW_TIMEOUT_SECONDS: '2',
      MAX_PREVIEWS_IN_FLIGHT_PER_KEY: '1',
    });
    await svc.start();
  });
  afterAll(async () => {
    if (svc.running) await svc.kill();
    await silent.close();
    await nats.destroy();
    await db.drop();
  });

  it.each(['ssh', 'https'])(
    '%s: answered 504 preview_timeout within the bound; git, its transport and the scratch folder are gone, the socket closed',
    async (scheme) => {
      const marker = `never-answers-${scheme}-${Date.now()}`;
      const before = silent.connections;
      const started = Date.now();
      const r = await previewOf(`${scheme}://${scheme === 'ssh' ? 'git@' : ''}127.0.0.1:${silent.port}/${marker}.git`);
      const took = Date.now() - started;
      expect(r.status).toBe(504);
      expect(r.json.error.code).toBe('preview_timeout');
      expect(took).toBeGreaterThanOrEqual(1_900);
      expect(took).toBeLessThan(8_000);
      expect(silent.connections).toBeGreaterThan(before);
      expect(await gone(marker)).toBe(true);
      expect(leftovers()).toEqual([]);
    },
  );

  it('MAX_PREVIEWS_IN_FLIGHT_PER_KEY: a second preview of the key while one runs is 429', async () => {
    const marker = `in-flight-${Date.now()}`;
    const first = previewOf(`ssh://git@127.0.0.1:${silent.port}/${marker}.git`);
    expect(await eventually(() => processesWith(marker).length > 0, 5_000)).toBe(true);
    const second = await previewOf(`ssh://git@127.0.0.1:${silent.port}/${marker}-2.git`);
    expect(second.status).toBe(429);
    expect(second.json.error.code).toBe('too_many_previews');
    expect((await first).status).toBe(504);
    expect(await gone(marker)).toBe(true);
  });

  it('the service killed (SIGKILL) mid-preview: its helper kills git and ssh, and the socket closes', async () => {
    const marker = `service-killed-${Date.now()}`;
    const pending = previewOf(`ssh://git@127.0.0.1:${silent.port}/${marker}.git`);
    expect(
      await eventually(
        () => processesWith(marker).some((p) => p.command.startsWith('ssh') || p.command.includes('/ssh ')),
        5_000,
      ),
    ).toBe(true);
    await svc.kill('SIGKILL');
    await pending;
    expect(await gone(marker)).toBe(true);
    expect(processesWith(marker)).toEqual([]);
  });
});
