/**
 * The adapters read the answers real forges gave (drone/go-scm's recorded answers, test/fixtures/public/drone-go-scm),
 * replayed by each forge's stand-in: the fields the run relies on (number, page, state, branches, head commit) come
 * out as the forge wrote them, and a request the forge calls open is never taken for merged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForgeConnection } from './http/forge-fetch';
import { ForgePort } from './forge-port';
import { GitHubForge } from './github/github-forge';
import { GitLabForge } from './gitlab/gitlab-forge';
import { GiteaForge } from './gitea/gitea-forge';
import { ForgeStandIn, startGiteaStandIn, startGitHubStandIn, startGitLabStandIn } from '../../../test/support/forges';

const recorded = (file: string) =>
  JSON.parse(readFileSync(join(__dirname, '../../../test/fixtures/public/drone-go-scm', file), 'utf8'));

const CASES = [
  {
    kind: 'github',
    start: startGitHubStandIn,
    adapter: (c: ForgeConnection) => new GitHubForge(c),
    path: 'octocat/Hello-World',
    one: 'github/pr.json',
    list: 'github/pulls.json',
    // GitHub's own example: state open, merged false, and a merged_at all the same. Open it is.
    expected: {
      number: 1347,
      url: 'https://github.com/octocat/Hello-World/pull/1347',
      state: 'open',
      head: 'new-topic',
      base: 'master',
      headSha: '6dcb09b5b57875f334f61aebed695e2e4193db5e',
    },
  },
  {
    kind: 'gitea',
    start: startGiteaStandIn,
    adapter: (c: ForgeConnection) => new GiteaForge(c),
    path: 'jcitizen/my-repo',
    one: 'gitea/pr.json',
    list: 'gitea/prs.json',
    expected: {
      number: 1,
      url: 'https://try.gitea.io/jcitizen/my-repo/pulls/1',
      state: 'open',
      head: 'feature',
      base: 'master',
      headSha: '4f5e7d8f15cf79387cfd8a0d30c58855ab61e138',
    },
  },
  {
    kind: 'gitlab',
    start: startGitLabStandIn,
    adapter: (c: ForgeConnection) => new GitLabForge(c),
    path: 'gitlab-org/testme',
    one: 'gitlab/merge.json',
    list: 'gitlab/merges.json',
    expected: {
      number: 1,
      url: 'https://gitlab.com/gitlab-org/testme/merge_requests/1',
      state: 'closed',
      head: 'fix',
      base: 'master',
      headSha: '12d65c8dd2b2676fa3ac47d955accc085a37a9c1',
    },
  },
];

describe.each(CASES)('the $kind adapter on answers $kind gave', ({ start, adapter, path, one, list, expected }) => {
  let server: ForgeStandIn;
  let forge: ForgePort;

  beforeAll(async () => {
    server = (await start()).repository(path);
    forge = adapter({ apiUrl: server.apiUrl, token: () => server.token, caPem: server.caPem });
  });
  afterAll(() => server.stop());

  it('reads a request', async () => {
    server.answerNext({ status: 200, body: recorded(one) });
    const read = await forge.readMergeRequest({ apiUrl: server.apiUrl, path }, expected.number);
    expect(read).toEqual(expected);
  });

  it("finds a branch's request in a list page", async () => {
    server.answerNext({ status: 200, body: recorded(list) });
    const found = await forge.findMergeRequest({ apiUrl: server.apiUrl, path }, expected.head, expected.base);
    expect(found).toEqual(expected);
    expect(
      await (server.answerNext({ status: 200, body: recorded(list) }),
      forge.findMergeRequest({ apiUrl: server.apiUrl, path }, 'other', expected.base)),
    ).toBeNull();
  });
});
