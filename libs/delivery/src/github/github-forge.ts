/**
 * GitHub (github.com and GitHub Enterprise Server) through @octokit/rest: pull requests, their labels (GitHub
 * creates a label a request names when the repository lacks it), and auto-merge, which GitHub offers through
 * GraphQL only (`enablePullRequestAutoMerge`, with `expectedHeadOid` so only the pushed commit is merged).
 */
import { Octokit } from '@octokit/rest';
import { ForgeError, MergeRequest, MergeRequestSpec } from '../port/forge-port';
import { ForgeConnection } from '../http/forge-fetch';
import { redact } from '../http/redact';
import { ForgeAdapter, ownerAndName } from '../adapter/forge-adapter';

/** The fields of a pull request the adapter reads (REST `pulls` answers). */
interface GitHubPull {
  number: number;
  html_url: string;
  state: string;
  merged_at: string | null;
  /** On a single pull request only. */
  merged?: boolean;
  merge_commit_sha: string | null;
  node_id: string;
  head: { ref: string; sha: string; repo: { full_name: string } | null };
  base: { ref: string; repo: { full_name: string } };
}

/** GitHub's largest page. */
const PER_PAGE = 100;

const ENABLE_AUTO_MERGE = `mutation($pullRequestId: ID!, $expectedHeadOid: GitObjectID) {
  enablePullRequestAutoMerge(input: {pullRequestId: $pullRequestId, expectedHeadOid: $expectedHeadOid, mergeMethod: MERGE}) {
    clientMutationId
  }
}`;

export class GitHubForge extends ForgeAdapter {
  readonly kind = 'github' as const;
  private readonly octokit: Octokit;

  constructor(connection: ForgeConnection) {
    super('github', connection, (token) => ['authorization', `Bearer ${token}`]);
    const log = (line: string) => connection.log?.(redact(line, connection.token()));
    this.octokit = new Octokit({
      baseUrl: connection.apiUrl.replace(/\/+$/, ''),
      request: { fetch: this.fetch },
      // The fetch logs every call; octokit's own warnings (deprecations) go to the same place.
      log: { debug: () => undefined, info: () => undefined, warn: log, error: log },
    });
  }

  protected async listRequests(path: string, head: string, base: string): Promise<MergeRequest[]> {
    const { owner, repo } = ownerAndName(this.kind, path);
    const pulls = await this.octokit.paginate(this.octokit.rest.pulls.list, {
      owner,
      repo,
      head: `${owner}:${head}`,
      base,
      state: 'all',
      per_page: PER_PAGE,
    });
    // The head filter names the owner; a fork of the owner's own (another name) still has another head repository.
    return (pulls as GitHubPull[])
      .filter((p) => p.head.ref === head && p.base.ref === base && p.head.repo?.full_name === p.base.repo.full_name)
      .map(asMergeRequest);
  }

  protected async createRequest(spec: MergeRequestSpec): Promise<number> {
    const { data } = await this.octokit.rest.pulls.create({
      ...ownerAndName(this.kind, spec.repository.path),
      head: spec.head,
      base: spec.base,
      title: spec.title,
      body: spec.body,
    });
    return data.number;
  }

  protected async editRequest(spec: MergeRequestSpec, number: number): Promise<void> {
    await this.octokit.rest.pulls.update({
      ...ownerAndName(this.kind, spec.repository.path),
      pull_number: number,
      title: spec.title,
      body: spec.body,
    });
  }

  protected async setLabels(path: string, number: number, labels: readonly string[]): Promise<void> {
    await this.octokit.rest.issues.setLabels({
      ...ownerAndName(this.kind, path),
      issue_number: number,
      labels: [...labels],
    });
  }

  protected async enableAutoMerge(spec: MergeRequestSpec, number: number): Promise<void> {
    const { data } = await this.octokit.rest.pulls.get({
      ...ownerAndName(this.kind, spec.repository.path),
      pull_number: number,
    });
    try {
      await this.octokit.graphql(ENABLE_AUTO_MERGE, {
        pullRequestId: data.node_id,
        expectedHeadOid: spec.headSha ?? null,
      });
    } catch (e) {
      // GraphQL answers 200 with `errors` (type UNPROCESSABLE: auto-merge not allowed, request in clean status).
      if ((e as Error).name === 'GraphqlResponseError') throw new ForgeError(this.asForgeError(e).message, 422);
      throw e;
    }
  }

  protected async getRequest(path: string, number: number): Promise<MergeRequest> {
    const { data } = await this.octokit.rest.pulls.get({ ...ownerAndName(this.kind, path), pull_number: number });
    return asMergeRequest(data as GitHubPull);
  }

  protected async closeRequest(path: string, number: number): Promise<void> {
    await this.octokit.rest.pulls.update({ ...ownerAndName(this.kind, path), pull_number: number, state: 'closed' });
  }
}

/**
 * GitHub reports a merged pull request as `closed` with `merged_at` (and `merged` on a single one); its
 * merge_commit_sha counts only then (an open one's is GitHub's test merge). `state: open` wins over anything
 * else: GitHub's own documentation example is open with a `merged_at`, and a request taken for merged while it
 * is open would let a run go on to a pass that needs the first one in the branch.
 */
function asMergeRequest(pull: GitHubPull): MergeRequest {
  const merged = pull.state !== 'open' && (pull.merged_at !== null || pull.merged === true);
  return {
    number: pull.number,
    url: pull.html_url,
    state: pull.state === 'open' ? 'open' : merged ? 'merged' : 'closed',
    head: pull.head.ref,
    base: pull.base.ref,
    headSha: pull.head.sha,
    ...(merged && pull.merge_commit_sha ? { mergeCommitSha: pull.merge_commit_sha } : {}),
  };
}
