import { execFileSync } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { createBody } from '../support/run-fixtures';
import { api, natsApi } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo } from '../support/services';

jest.setTimeout(180_000);

const KEYS = {
  alice: 'alice-environments-key-0123',
  bob: 'bob-environments-key-012345',
  admin: 'admin-environments-0123456',
};
const as = (key: string) => ({ 'x-api-key': key });

/** The shipped reference as its own git working copy (TEMPLATE_DIR): its history is what environments are measured against. */
function referenceRepository(): { dir: string; commit(message: string): string; head(): string } {
  const dir = tempDir('environments-reference');
  cpSync(join(__dirname, '../../templates/platform'), dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=ref', '-c', 'user.email=ref@x', ...args], {
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '--initial-branch=main');
  git('add', '-A');
  git('commit', '-q', '-m', 'reference');
  return {
    dir,
    head: () => git('rev-parse', 'HEAD'),
    commit(message) {
      writeFileSync(join(dir, 'NOTES.md'), `${message}\n`);
      git('add', '-A');
      git('commit', '-q', '-m', message);
      return git('rev-parse', 'HEAD');
    },
  };
}

/**
 * The environments API (#51): each cluster folder a key's runs made, with the reference commit that made it and
 * how far the reference has moved since; the same over REST and NATS; another key's environment is a 404.
 */
describe('environments (REST and NATS)', () => {
  const reference = referenceRepository();
  const keysFile = join(tempDir('environments-keys'), 'keys.yaml');
  writeFileSync(
    keysFile,
    `- {name: alice, role: operator, key: ${KEYS.alice}}
- {name: bob, role: operator, key: ${KEYS.bob}}
- {name: root, role: admin, key: ${KEYS.admin}}
`,
  );
  const stack = useServiceStack(() => ({ API_KEYS_FILE: keysFile, TEMPLATE_DIR: reference.dir }));
  let nats: Awaited<ReturnType<typeof natsApi>>;
  beforeAll(async () => (nats = await natsApi(stack.nats.url)));
  afterAll(() => nats?.close());
  const cert = makeRsaCert();
  const remote = bareRepo();

  async function scaffold(cluster: string, key: string) {
    const created = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      createBody(cluster, remote.url, cert.certPem),
      as(key),
    );
    expect(created.status).toBe(202);
    return waitForRun(created.json.id, key);
  }
  /** Polls the run as its own key (the suite's keys file has no default key). */
  async function waitForRun(id: string, key: string) {
    for (let i = 0; i < 600; i++) {
      const r = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`, undefined, as(key));
      if (['succeeded', 'failed', 'cancelled'].includes(r.json?.status)) return r.json;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`run ${id} did not finish`);
  }
  const list = (key: string, query = '') =>
    api(stack.svc.base, 'GET', `/api/v1/environments${query}`, undefined, as(key));

  it('lists the environment a run made, with the reference commit its passes recorded, over REST and NATS alike', async () => {
    const made = reference.head();
    const run = await scaffold('env-a', KEYS.alice);
    expect(run.status).toBe('succeeded');

    // The passes' events record where the reference stood.
    const events = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${run.id}/events`, undefined, as(KEYS.alice));
    const pushed = events.json.items.filter((e: any) => ['InfraPushed', 'FullPushed'].includes(e.type));
    expect(pushed.map((e: any) => [e.type, e.data.reference_commit])).toEqual([
      ['InfraPushed', made],
      ['FullPushed', made],
    ]);

    const listed = await list(KEYS.alice);
    expect(listed.status).toBe(200);
    expect(listed.json.items).toHaveLength(1);
    const environment = listed.json.items[0];
    expect(environment).toMatchObject({
      cluster_name: 'env-a',
      gitops_path: 'clusters/env-a',
      branch: 'main',
      owner: 'alice',
      status: 'live',
      runs: 1,
      last_run: { id: run.id, status: 'succeeded' },
      infra_commit: run.infra_commit,
      full_commit: run.full_commit,
      reference_commit: made,
      reference_dirty: false,
      reference_newest: made,
      commits_behind: 0,
    });
    expect(environment.id).toMatch(/^[0-9a-f]{32}$/);

    const one = await api(stack.svc.base, 'GET', `/api/v1/environments/${environment.id}`, undefined, as(KEYS.alice));
    expect(one.json).toEqual(environment);
    const overNats = await nats.request('environments.v1.list', {}, KEYS.alice);
    expect(overNats.json).toEqual(listed.json);
    const oneOverNats = await nats.request('environments.v1.get', { id: environment.id }, KEYS.alice);
    expect(oneOverNats.json).toEqual(environment);
  });

  it('counts the commits the reference gained since, and a new run brings the environment up to date', async () => {
    const [environment] = (await list(KEYS.alice)).json.items;
    const newer = [reference.commit('a chart bumped'), reference.commit('an app added')][1];
    // The newest commit is read at most every few seconds.
    await new Promise((resolve) => setTimeout(resolve, 5500));
    const behind = await api(
      stack.svc.base,
      'GET',
      `/api/v1/environments/${environment.id}`,
      undefined,
      as(KEYS.alice),
    );
    expect(behind.json).toMatchObject({
      reference_commit: environment.reference_commit,
      reference_newest: newer,
      commits_behind: 2,
    });

    const again = await scaffold('env-a', KEYS.alice);
    expect(again.status).toBe('succeeded');
    const current = await api(
      stack.svc.base,
      'GET',
      `/api/v1/environments/${environment.id}`,
      undefined,
      as(KEYS.alice),
    );
    expect(current.json).toMatchObject({
      runs: 2,
      last_run: { id: again.id },
      reference_commit: newer,
      commits_behind: 0,
    });
  });

  it("keeps another key's environments out of its answers: an empty list, and a 404 like an unknown id", async () => {
    const [environment] = (await list(KEYS.alice)).json.items;
    expect((await list(KEYS.bob)).json).toEqual({ items: [], next_cursor: null });
    const theirs = await api(stack.svc.base, 'GET', `/api/v1/environments/${environment.id}`, undefined, as(KEYS.bob));
    const unknown = await api(stack.svc.base, 'GET', `/api/v1/environments/${'0'.repeat(32)}`, undefined, as(KEYS.bob));
    expect([theirs.status, theirs.json]).toEqual([unknown.status, unknown.json]);
    expect(theirs.status).toBe(404);
    expect(theirs.text).not.toContain('env-a');
    const overNats = await nats.request('environments.v1.get', { id: environment.id }, KEYS.bob);
    expect(overNats.status).toBe(404);
    expect((await nats.request('environments.v1.list', {}, KEYS.bob)).json.items).toEqual([]);

    // An admin sees every key's.
    expect((await list(KEYS.admin)).json.items.map((e: any) => e.id)).toContain(environment.id);
  });

  it('pages by id, filters by cluster and refuses bad parameters', async () => {
    await scaffold('env-b', KEYS.alice);
    const all = (await list(KEYS.alice)).json.items.map((e: any) => e.id);
    expect(all).toHaveLength(2);
    expect([...all].sort()).toEqual(all);
    const first = await list(KEYS.alice, '?limit=1');
    expect(first.json.items.map((e: any) => e.id)).toEqual([all[0]]);
    expect(first.json.next_cursor).toBe(all[0]);
    const second = await list(KEYS.alice, `?limit=1&cursor=${first.json.next_cursor}`);
    expect(second.json).toEqual({ items: [expect.objectContaining({ id: all[1] })], next_cursor: null });
    expect((await list(KEYS.alice, '?cluster_name=env-b')).json.items.map((e: any) => e.cluster_name)).toEqual([
      'env-b',
    ]);
    expect((await list(KEYS.alice, '?limit=0')).status).toBe(400);
    expect((await list(KEYS.alice, '?cursor=not-a-cursor')).status).toBe(400);
    expect((await list(KEYS.alice, '?cluster_name=Not_A_Name')).status).toBe(400);
    expect((await api(stack.svc.base, 'GET', '/api/v1/environments/not-an-id', undefined, as(KEYS.alice))).status).toBe(
      404,
    );
  });
});
