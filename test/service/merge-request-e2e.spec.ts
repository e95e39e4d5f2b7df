import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeDryRun } from '#libs/generator/summary-text';
import { makeRsaCert } from '../support/certs';
import { dataPlaces, hitsIn } from '../support/data-places';
import { tempDir } from '../support/files';
import {
  ForgeStandIn,
  headsOfBareRepositories,
  HeldRequest,
  standInTls,
  startGiteaStandIn,
  startGitHubStandIn,
  startGitLabStandIn,
} from '../support/forges';
import { credentialsDir, HttpsGitServer } from '../support/git-servers';
import { api, waitFor } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { TestDatabase, TestNats } from '../support/services';

jest.setTimeout(300_000);

const GIT_USER = 'mr-git';
const GIT_PASSWORD = 'MergeRequestGitPassword-41c2';
const CONSOLE_URL = 'https://scaffolder.example.com';

/** Refuses every push to main (a protected branch) and writes down every ref pushed. */
function protectMain(gitDir: string): string {
  const log = join(gitDir, 'pushed-refs.log');
  const hook = join(gitDir, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\nwhile read old new ref; do\n  echo "$ref" >> '${log}'\n  if [ "$ref" = refs/heads/main ]; then echo 'main is protected' >&2; exit 1; fi\ndone\n`,
  );
  chmodSync(hook, 0o755);
  return log;
}

/** A person's commit on a request's branch (pushed as git does, through a clone of the repository). */
function editBranch(gitDir: string, branch: string): void {
  const work = tempDir('edit');
  const g = (...a: string[]) =>
    execFileSync('git', ['-C', work, '-c', 'user.name=person', '-c', 'user.email=person@x', ...a], { stdio: 'ignore' });
  execFileSync('git', ['clone', '-q', '--branch', branch, gitDir, work]);
  writeFileSync(join(work, 'NOTES.md'), 'reviewed\n');
  g('add', 'NOTES.md');
  g('commit', '-q', '-m', 'a reviewer note');
  g('push', '-q', 'origin', `HEAD:refs/heads/${branch}`);
}

/**
 * A scaffold delivered as merge requests through the service (a real process, NATS, PostgreSQL, git over HTTPS
 * with main protected) against each forge's stand-in: one request per pass, the run waits for each merge, which
 * the test makes as a person would (the forge merges the branch: main moves to it, the request says merged).
 */
describe('merge-request delivery end to end (GitHub, GitLab and Gitea stand-ins)', () => {
  const cert = makeRsaCert();
  let nats: TestNats;
  let db: TestDatabase;
  let git: HttpsGitServer;
  let svc: ServiceProcess;
  const forges: Record<string, { standIn: ForgeStandIn; path: string; url: string; dir: string; pushed: string }> = {};
  const gitDirs = new Map<string, string>();
  const outputs: string[] = [];

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    git = await HttpsGitServer.start({ username: GIT_USER, password: GIT_PASSWORD });
    const heads = headsOfBareRepositories((repo) => gitDirs.get(repo));
    const started = {
      github: await startGitHubStandIn({ headSha: heads }),
      gitlab: await startGitLabStandIn({ headSha: heads }),
      gitea: await startGiteaStandIn({ headSha: heads }),
    };
    const tokens = tempDir('forge-tokens');
    const defaults = Object.entries(started).map(([kind, standIn]) => {
      const path = `platform/envs-${kind}`;
      const repo = git.repo(path);
      gitDirs.set(path, repo.dir);
      standIn.repository(path);
      forges[kind] = { standIn, path, url: repo.url, dir: repo.dir, pushed: protectMain(repo.dir) };
      const tokenFile = join(tokens, kind);
      writeFileSync(tokenFile, standIn.token, { mode: 0o600 });
      const apiUrl = (standIn as unknown as { apiUrl: string }).apiUrl;
      return { prefix: repo.url.replace(/\.git$/, ''), forge: kind, api_url: apiUrl, token_file: tokenFile };
    });
    svc = await ServiceProcess.create({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      GIT_CREDENTIALS_DIR: credentialsDir({ username: GIT_USER, password: GIT_PASSWORD }),
      GIT_CREDENTIALS_HOSTS: `127.0.0.1:${git.port}`,
      GIT_CA_FILE: git.tls.caFile,
      FORGE_DEFAULTS: JSON.stringify(defaults),
      FORGE_CA_FILE: standInTls().caFile,
      MERGE_POLL_MAX_MS: '200',
      SEALED_SECRETS_POLL_INITIAL_MS: '50',
      CONSOLE_URL,
      LOG_LEVEL: 'debug',
    });
    await svc.start();
  });

  afterAll(async () => {
    if (svc?.running) await svc.kill('SIGTERM');
    outputs.push(svc?.output ?? '');
    for (const { standIn } of Object.values(forges)) await standIn.stop();
    await git?.stop();
    await nats?.destroy();
    await db?.drop();
  });

  const body = (cluster: string, url: string) => ({
    cluster_name: cluster,
    domain: `${cluster}.example.com`,
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url, branch: 'main' },
    target: { sealing_cert_pem: cert.certPem },
    delivery: { mode: 'merge_request' },
  });
  const run = async (id: string) => (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json;
  const eventTypes = async (id: string) =>
    (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items
      .map((e: { type: string }) => e.type)
      .filter((t: string) => t !== 'StepProgress');
  const requestFrom = (kind: string, head: string) =>
    waitFor(`a request from ${head}`, async () =>
      forges[kind].standIn.requestsOf(forges[kind].path).find((r) => r.head === head),
    );
  const ended = (id: string) =>
    waitFor(`run ${id} to end`, async () => {
      const r = await run(id);
      return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    });
  /** Merges a request as the forge does when a person presses the button: main moves to its branch (a fast-forward). */
  const mergeOnForge = (kind: string, request: HeldRequest): string => {
    const { dir, path, standIn } = forges[kind];
    const tip = execFileSync('git', ['--git-dir', dir, 'rev-parse', `refs/heads/${request.head}`], {
      encoding: 'utf8',
    }).trim();
    execFileSync('git', ['--git-dir', dir, 'update-ref', 'refs/heads/main', tip]);
    return standIn.merge(path, request.number, tip);
  };
  const created = async (kind: string, cluster: string): Promise<string> => {
    const answer = await api(svc.base, 'POST', '/api/v1/scaffolds', body(cluster, forges[kind].url));
    expect(answer.status).toBe(202);
    return answer.json.id;
  };

  it.each(['github', 'gitlab', 'gitea'])(
    '%s: one request per pass, each merged before the next step, no push to main, the body is the dry run',
    async (kind) => {
      const cluster = `mr-${kind}`;
      const id = await created(kind, cluster);
      const infra = await requestFrom(kind, `scaffolder/${cluster}/scaffold-infra/${id}`);
      expect(infra).toMatchObject({ base: 'main', state: 'open', title: `scaffold(${cluster}): infrastructure pass` });
      expect(infra.body).toContain(`run ${id}: ${CONSOLE_URL}/ui/#/runs/${id}`);
      expect(infra.body).toMatch(/^dry run: \d+ files would change/);
      const waiting = await waitFor('the infrastructure merge wait', async () => {
        const r = await run(id);
        return r.step === 'infra-merge' ? r : undefined;
      });
      expect(waiting).toMatchObject({
        delivery: 'merge_request',
        infra_commit: null,
        merge_requests: [{ pass: 'infra', number: infra.number, state: 'open', edited: false }],
      });
      // Labelled once the step is done (GitHub and Gitea label an issue after opening it).
      expect(infra.labels).toEqual(
        expect.arrayContaining(['gitops-scaffolder', 'operation:scaffold-infra', `cluster:${cluster}`]),
      );
      // A person adds a commit to the request's branch before merging it (Gitea's run): reported, not overwritten.
      if (kind === 'gitea') editBranch(forges[kind].dir, infra.head);
      const infraMerge = mergeOnForge(kind, infra);

      const full = await requestFrom(kind, `scaffolder/${cluster}/scaffold-full/${id}`);
      // The same request's preview now (main holds the merged infrastructure) is the full request's body.
      const preview = await api(svc.base, 'POST', '/api/v1/scaffolds/preview', body(cluster, forges[kind].url));
      expect(preview.status).toBe(200);
      expect(full.body.split('\n---\n')[0]).toBe(describeDryRun(preview.json.summary, preview.json.changes));
      expect(full.body).toContain('sealed');
      const fullMerge = mergeOnForge(kind, full);

      const done = await ended(id);
      expect(done).toMatchObject({ status: 'succeeded', infra_commit: infraMerge, full_commit: fullMerge });
      expect(
        done.merge_requests.map((m: { pass: string; state: string; edited: boolean }) => [m.pass, m.state, m.edited]),
      ).toEqual([
        ['infra', 'merged', kind === 'gitea'],
        ['full', 'merged', false],
      ]);
      expect(forges[kind].standIn.requestsOf(forges[kind].path).filter((r) => r.head.includes(id))).toHaveLength(2);
      expect(await eventTypes(id)).toEqual([
        'ScaffoldRequested',
        'MergeRequestOpened',
        'MergeRequestMerged',
        'SealedSecretsReady',
        'CertFetched',
        'MergeRequestOpened',
        'MergeRequestMerged',
        'ScaffoldSucceeded',
      ]);
      const pushed = readFileSync(forges[kind].pushed, 'utf8').split('\n').filter(Boolean);
      expect(pushed).not.toContain('refs/heads/main');
      // Pushed: the two request branches only (Gitea's infra branch twice: the run's push and the person's).
      expect([...new Set(pushed)]).toEqual([`refs/heads/${infra.head}`, `refs/heads/${full.head}`]);
    },
  );

  it('a request closed by a person fails the run with that reason, and nothing more is pushed', async () => {
    const cluster = 'mr-closed';
    const id = await created('gitlab', cluster);
    const infra = await requestFrom('gitlab', `scaffolder/${cluster}/scaffold-infra/${id}`);
    forges.gitlab.standIn.close(forges.gitlab.path, infra.number);
    const done = await ended(id);
    expect(done.status).toBe('failed');
    expect(done.message).toContain(`merge request #${infra.number} was closed without merging`);
    expect(done.merge_requests).toEqual([expect.objectContaining({ pass: 'infra', state: 'closed' })]);
    expect((await eventTypes(id)).slice(-2)).toEqual(['MergeRequestClosed', 'ScaffoldFailed']);
    const heads = forges.gitlab.standIn.requestsOf(forges.gitlab.path).filter((r) => r.head.includes(id));
    expect(heads).toHaveLength(1);
  });

  it('a run killed after pushing its branch, and again after opening its request, opens exactly one request', async () => {
    const cluster = 'mr-killed';
    await svc.kill('SIGKILL');
    outputs.push(svc.output);
    await svc.start({ SCAFFOLDER_CRASH_AT: 'after-push:infra' });
    const id = await created('github', cluster);
    await svc.exited();
    outputs.push(svc.output);
    await svc.start({ SCAFFOLDER_CRASH_AT: 'after-request:infra' });
    await svc.exited();
    outputs.push(svc.output);
    await svc.start();
    const head = `scaffolder/${cluster}/scaffold-infra/${id}`;
    const infra = await requestFrom('github', head);
    await waitFor('the infrastructure merge wait', async () =>
      (await run(id)).step === 'infra-merge' ? true : undefined,
    );
    mergeOnForge('github', infra);
    const full = await requestFrom('github', `scaffolder/${cluster}/scaffold-full/${id}`);
    mergeOnForge('github', full);
    expect((await ended(id)).status).toBe('succeeded');
    const ofRun = forges.github.standIn.requestsOf(forges.github.path).filter((r) => r.head.includes(id));
    expect(ofRun.map((r) => r.head)).toEqual([head, full.head]);
    // One commit of the run's infrastructure on its branch: the retried step found it and pushed nothing again.
    const log = execFileSync(
      'git',
      ['--git-dir', forges.github.dir, 'log', '--format=%H', `refs/heads/${head}`, '--grep', `Scaffold-Run: ${id}`],
      {
        encoding: 'utf8',
      },
    );
    expect(log.trim().split('\n')).toHaveLength(1);
  });

  it('no forge token in any event, log line, read-model row, answer, request body or commit', async () => {
    const tokens = Object.values(forges).map((f) => f.standIn.token);
    const places = await dataPlaces(nats.url, db.url);
    places['service output'] = [...outputs, svc.output].join('\n');
    const runs = (await api(svc.base, 'GET', '/api/v1/scaffolds?limit=100')).json.items as Array<{ id: string }>;
    expect(runs.length).toBeGreaterThanOrEqual(5);
    for (const r of runs) {
      places[`answer ${r.id}`] = JSON.stringify(await run(r.id));
      places[`events ${r.id}`] = (await api(svc.base, 'GET', `/api/v1/scaffolds/${r.id}/events`)).text;
      places[`log ${r.id}`] = (await api(svc.base, 'GET', `/api/v1/scaffolds/${r.id}/logs`)).text;
    }
    for (const [kind, f] of Object.entries(forges)) {
      places[`${kind} request bodies`] = f.standIn.received.map((c) => `${c.path}\n${c.body}`).join('\n');
      places[`${kind} history`] = execFileSync('git', ['--git-dir', f.dir, 'log', '--all', '-p'], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
    }
    // The scan can find: the stand-ins did receive the tokens, in their headers.
    expect(
      hitsIn({ headers: JSON.stringify(forges.github.standIn.received.map((c) => c.headers)) }, tokens),
    ).not.toEqual([]);
    expect(hitsIn(places, tokens)).toEqual([]);
    expect(existsSync(forges.github.pushed)).toBe(true);
  });
});
