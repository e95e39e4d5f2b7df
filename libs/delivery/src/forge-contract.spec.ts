/**
 * One contract for the three forge adapters, each against its forge's stand-in (test/support/forges: the forge's
 * REST paths, JSON, authentication, pagination and errors, on loopback HTTPS with a private CA the adapter is
 * told to trust as FORGE_CA_FILE tells the service). What the run's steps rely on: a request is opened once
 * however often a step is retried, a person's merge or close is seen, an edited branch is seen, errors carry the
 * status and the forge's wait and never the token, and no redirect is followed.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ForgeConnection } from './http/forge-fetch';
import { ForgeError, ForgePort, ForgeRepository, MergeRequestSpec } from './forge-port';
import { GitHubForge } from './github/github-forge';
import { GitLabForge } from './gitlab/gitlab-forge';
import { GiteaForge } from './gitea/gitea-forge';
import {
  ForgeStandIn,
  GitHubStandIn,
  headsOfBareRepositories,
  GitLabStandIn,
  randomSha,
  startGiteaStandIn,
  startGitHubStandIn,
  startGitLabStandIn,
} from '../../../test/support/forges';
import { tempDir } from '../../../test/support/files';

interface Subject {
  kind: string;
  start: () => Promise<ForgeStandIn>;
  adapter: (connection: ForgeConnection) => ForgePort;
  /** A repository path as this forge's API names it (GitLab: the full namespace path). */
  repo: string;
  /** Lets the stand-in take auto-merge for the repository (GitHub's repository setting). */
  allowAutoMerge?: (server: ForgeStandIn, repo: string) => void;
}

const SUBJECTS: Subject[] = [
  {
    kind: 'github',
    start: startGitHubStandIn,
    adapter: (c) => new GitHubForge(c),
    repo: 'platform/envs',
    allowAutoMerge: (s, repo) => (s as GitHubStandIn).autoMergeAllowed.add(repo),
  },
  { kind: 'gitlab', start: startGitLabStandIn, adapter: (c) => new GitLabForge(c), repo: 'platform/team-a/envs' },
  { kind: 'gitea', start: startGiteaStandIn, adapter: (c) => new GiteaForge(c), repo: 'platform/envs' },
];

describe.each(SUBJECTS)('the $kind adapter against its stand-in', ({ kind, start, adapter, repo, allowAutoMerge }) => {
  let server: ForgeStandIn;
  let forge: ForgePort;
  let repository: ForgeRepository;
  /** What the adapter logged, and every error it threw: scanned for the token at the end. */
  const logged: string[] = [];
  const thrown: unknown[] = [];

  const connection = (overrides: Partial<ForgeConnection> = {}): ForgeConnection => ({
    apiUrl: server.apiUrl,
    token: () => server.token,
    caPem: server.caPem,
    log: (line) => logged.push(line),
    ...overrides,
  });
  const spec = (head: string, overrides: Partial<MergeRequestSpec> = {}): MergeRequestSpec => ({
    repository,
    head,
    base: 'main',
    title: `Scaffold acme (${head})`,
    body: `## Plan\n\n- clusters/acme/flux-system/gotk-sync.yaml\n\nrun: r-${head}`,
    labels: ['scaffolder', 'env:acme'],
    autoMerge: false,
    ...overrides,
  });
  /** The ForgeError a call fails with (kept for the token scan). */
  const failure = async (call: Promise<unknown>): Promise<ForgeError> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    thrown.push(error);
    expect(error).toBeInstanceOf(ForgeError);
    return error as ForgeError;
  };
  const pushed = (head: string) => server.setHead(repo, head);

  beforeAll(async () => {
    server = (await start()).repository(repo);
    forge = adapter(connection());
    repository = { apiUrl: server.apiUrl, path: repo };
  });
  afterAll(() => server.stop());

  it('opens a request once: none found, opened, found, and opening it again gives the same one', async () => {
    const head = 'scaffolder/acme/create/abc1234';
    const sha = pushed(head);
    expect(await forge.findMergeRequest(repository, head, 'main')).toBeNull();

    const opened = await forge.openMergeRequest(spec(head));
    expect(opened).toMatchObject({ state: 'open', head, base: 'main', headSha: sha });
    expect(opened.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//);
    expect(opened.mergeCommitSha).toBeUndefined();
    expect(await forge.findMergeRequest(repository, head, 'main')).toEqual(opened);

    const again = await forge.openMergeRequest(spec(head, { body: 'the same plan, retried' }));
    expect(again.number).toBe(opened.number);
    const held = server.requestsOf(repo).filter((r) => r.head === head);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ body: 'the same plan, retried', labels: ['scaffolder', 'env:acme'] });
  });

  it("brings an open request's body and labels up to date", async () => {
    const head = 'scaffolder/acme/upgrade/def5678';
    pushed(head);
    const opened = await forge.openMergeRequest(spec(head));
    const updated = await forge.updateMergeRequest(
      spec(head, { title: 'Upgrade acme', body: 'new plan', labels: ['scaffolder', 'env:acme', 'op:upgrade'] }),
      opened.number,
    );
    expect(updated).toMatchObject({ number: opened.number, state: 'open' });
    const held = server.requestsOf(repo).find((r) => r.number === opened.number)!;
    expect(held).toMatchObject({
      title: 'Upgrade acme',
      body: 'new plan',
      labels: ['scaffolder', 'env:acme', 'op:upgrade'],
    });
    expect((await forge.readMergeRequest(repository, opened.number)).state).toBe('open');
  });

  it('sees a merge by a person, with its merge commit, and a close by a person', async () => {
    const merging = 'scaffolder/acme/create/1111111';
    pushed(merging);
    const toMerge = await forge.openMergeRequest(spec(merging));
    const mergeCommit = server.merge(repo, toMerge.number);
    expect(await forge.readMergeRequest(repository, toMerge.number)).toMatchObject({
      state: 'merged',
      mergeCommitSha: mergeCommit,
    });

    const closing = 'scaffolder/acme/create/2222222';
    pushed(closing);
    const toClose = await forge.openMergeRequest(spec(closing));
    server.close(repo, toClose.number);
    const closed = await forge.readMergeRequest(repository, toClose.number);
    expect(closed.state).toBe('closed');
    expect(closed.mergeCommitSha).toBeUndefined();
    // Closing a closed one asks the forge for nothing but its state.
    const calls = server.received.length;
    await forge.closeMergeRequest(repository, toClose.number);
    expect(server.received.slice(calls).map((c) => c.method)).toEqual(['GET']);
  });

  it("takes no fork's request from a branch of the same name for its own", async () => {
    const head = 'scaffolder/acme/create/9999999';
    const [fork] = server.precreate(repo, 1, { head: () => head, fromFork: true });
    expect(await forge.findMergeRequest(repository, head, 'main')).toBeNull();
    const own = await forge.openMergeRequest(spec(head));
    expect(own.number).not.toBe(fork.number);
    expect(await forge.findMergeRequest(repository, head, 'main')).toMatchObject({ number: own.number });
    expect(server.requestsOf(repo).find((r) => r.number === fork.number)!.body).toBe('');
  });

  it('closes an open request', async () => {
    const head = 'scaffolder/acme/retire/3333333';
    pushed(head);
    const opened = await forge.openMergeRequest(spec(head));
    await forge.closeMergeRequest(repository, opened.number);
    expect(server.requestsOf(repo).find((r) => r.number === opened.number)!.state).toBe('closed');
    expect((await forge.readMergeRequest(repository, opened.number)).state).toBe('closed');
  });

  it("reports the branch's new head after a force-push or an edit in the forge", async () => {
    const head = 'scaffolder/acme/rotate/4444444';
    const pushedSha = pushed(head);
    const opened = await forge.openMergeRequest(spec(head));
    expect(opened.headSha).toBe(pushedSha);
    const edited = server.setHead(repo, head, randomSha());
    const read = await forge.readMergeRequest(repository, opened.number);
    expect(read.headSha).toBe(edited);
    expect(read.headSha).not.toBe(pushedSha);
  });

  it('fails with 401 and no token in the message, for a wrong token and for a 401 answer', async () => {
    const wrong = `wrong-token-${randomSha()}`;
    const stranger = adapter(connection({ token: () => wrong }));
    const refused = await failure(stranger.readMergeRequest(repository, 1));
    expect(refused.status).toBe(401);
    expect(refused.retryable).toBe(false);
    expect(refused.message).not.toContain(wrong);
    expect(server.receivedText()).toContain(wrong); // it was sent (to the forge only)

    server.unauthorizedNext();
    const answered = await failure(forge.readMergeRequest(repository, 1));
    expect(answered.status).toBe(401);
    expect(answered.message).toContain('401');
  });

  it('fails with 404 for a request or a repository the forge does not have', async () => {
    expect((await failure(forge.readMergeRequest(repository, 9999))).status).toBe(404);
    const elsewhere = { ...repository, path: kind === 'gitlab' ? 'platform/team-b/envs' : 'platform/none' };
    expect((await failure(forge.findMergeRequest(elsewhere, 'x', 'main'))).status).toBe(404);
  });

  it("reports a rate limit with the forge's wait, and a 5xx as worth retrying", async () => {
    server.rateLimitNext(120);
    const limited = await failure(forge.readMergeRequest(repository, 1));
    expect([403, 429]).toContain(limited.status);
    expect(limited.retryAfterMs).toBeGreaterThan(110_000);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(121_000);

    server.answerNext({ status: 502, body: '<html><body>502 Bad Gateway</body></html>' });
    const down = await failure(forge.readMergeRequest(repository, 1));
    expect(down).toMatchObject({ status: 502, retryAfterMs: 0 });
    expect(down.message).toContain('502 Bad Gateway');
  });

  it("finds a branch's request behind 150 others, reading every page", async () => {
    const target = 'scaffolder/acme/create/5555555';
    pushed(target);
    // Created first: the oldest, so on the last page of a newest-first list that is not filtered by branch.
    const first = await forge.openMergeRequest(spec(target, { base: 'release' }));
    server.precreate(repo, 150, { base: 'release' });
    expect(await forge.findMergeRequest(repository, target, 'release')).toMatchObject({ number: first.number });

    // 150 earlier attempts of one branch, closed: the newest is the one found, after every page was read.
    const retried = 'scaffolder/acme/create/6666666';
    const attempts = server.precreate(repo, 150, { head: () => retried, base: 'release', state: 'closed' });
    const calls = server.received.length;
    const found = await forge.findMergeRequest(repository, retried, 'release');
    expect(found).toMatchObject({ number: attempts[149].number, state: 'closed' });
    const pages = server.received.slice(calls).map((c) => new URL(c.path, server.origin).searchParams.get('page'));
    expect(pages).toContain('2');
  });

  it('refuses a redirect naming the host, and follows it nowhere', async () => {
    const calls = server.received.length;
    server.redirectNext(`${server.origin}/elsewhere/moved`);
    const moved = await failure(forge.readMergeRequest(repository, 1));
    expect(moved.status).toBe(302);
    expect(moved.message).toContain(new URL(server.origin).host);
    expect(moved.message).not.toContain('elsewhere');
    expect(server.received.slice(calls)).toHaveLength(1);
    expect(server.received.some((c) => c.path.startsWith('/elsewhere'))).toBe(false);
  });

  it('asks for auto-merge of the pushed commit, and leaves the request open when the forge declines', async () => {
    allowAutoMerge?.(server, repo);
    const head = 'scaffolder/acme/create/7777777';
    const sha = pushed(head);
    const opened = await forge.openMergeRequest(spec(head, { autoMerge: true, headSha: sha }));
    expect(opened.state).toBe('open');
    expect(server.requestsOf(repo).find((r) => r.number === opened.number)!.autoMerge).toEqual({ sha });
    // The checks pass: the forge merges it, and the adapter reads it merged.
    expect(server.runScheduledMerges(repo)).toEqual([opened.number]);
    expect(await forge.readMergeRequest(repository, opened.number)).toMatchObject({ state: 'merged', headSha: sha });

    // The branch moved after the push: the forge refuses to merge another commit than the one named.
    const moved = 'scaffolder/acme/create/8888888';
    const old = pushed(moved);
    server.setHead(repo, moved);
    const declined = await forge.openMergeRequest(spec(moved, { autoMerge: true, headSha: old }));
    expect(declined.state).toBe('open');
    expect(server.requestsOf(repo).find((r) => r.number === declined.number)!.autoMerge).toBeUndefined();
    expect(logged.some((line) => line.includes('auto-merge') && line.includes(`#${declined.number}`))).toBe(true);
  });

  it("refuses a repository on another API before sending anything (the token is for this API's host only)", async () => {
    const calls = server.received.length;
    const other = { apiUrl: 'https://forge.example/api', path: repo };
    expect((await failure(forge.readMergeRequest(other, 1))).message).toContain('not on this adapter');
    expect(server.received.length).toBe(calls);
  });

  it('never puts the token in an error or a log line, and sends it only in the auth header', () => {
    expect(thrown.length).toBeGreaterThan(5);
    expect(logged.length).toBeGreaterThan(10);
    const text = [...thrown.map((e) => `${(e as Error).message} ${JSON.stringify(e)}`), ...logged].join('\n');
    expect(text).not.toContain(server.token);
    const carried = server.received.filter((c) => JSON.stringify(c).includes(server.token));
    expect(carried.length).toBeGreaterThan(0);
    for (const call of carried) {
      expect(call.path + call.body).not.toContain(server.token);
      const auth = kind === 'gitlab' ? call.headers['private-token'] : call.headers.authorization;
      expect(String(auth)).toContain(server.token);
    }
  });
});

describe('a stand-in whose branch heads come from a bare git repository', () => {
  const root = tempDir('forge-heads');
  const bare = join(root, 'envs.git');
  const work = join(root, 'work');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: work, encoding: 'utf8' }).trim();
  let server: GitLabStandIn;

  beforeAll(async () => {
    execFileSync('git', ['init', '--bare', '-q', bare]);
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'base');
    git('remote', 'add', 'origin', bare);
    git('push', '-q', 'origin', 'main', 'main:scaffolder/acme/create/0000001');
    server = (
      await startGitLabStandIn({ headSha: headsOfBareRepositories((r) => (r === 'platform/envs' ? bare : undefined)) })
    ).repository('platform/envs');
  });
  afterAll(() => server.stop());

  it("reports the branch's commit in the repository, a force-push included, and refuses a branch it lacks", async () => {
    const forge = new GitLabForge({ apiUrl: server.apiUrl, token: () => server.token, caPem: server.caPem });
    const repository = { apiUrl: server.apiUrl, path: 'platform/envs' };
    const head = 'scaffolder/acme/create/0000001';
    const request = { repository, head, base: 'main', title: 't', body: 'b', labels: [], autoMerge: false };
    const opened = await forge.openMergeRequest(request);
    expect(opened.headSha).toBe(git('rev-parse', 'HEAD'));

    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '--amend', '-m', 'edited');
    git('push', '-q', '--force', 'origin', `HEAD:${head}`);
    expect((await forge.readMergeRequest(repository, opened.number)).headSha).toBe(git('rev-parse', 'HEAD'));

    const missing = await forge.openMergeRequest({ ...request, head: 'no-such-branch' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 422 });
  });
});
