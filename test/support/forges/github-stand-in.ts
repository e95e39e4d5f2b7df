/**
 * GitHub's REST API for pull requests as docs.github.com describes it (and GraphQL's enablePullRequestAutoMerge):
 * paths at the API's root as api.github.com serves them, `Authorization: Bearer|token`, `per_page` up to 100
 * and `Link` pages, 422 "Validation Failed" for a second open pull request of a branch, 404 "Not Found",
 * 401 "Bad credentials", and the primary rate limit's 403 with `x-ratelimit-remaining: 0`.
 */
import type { RestEndpointMethodTypes } from '@octokit/rest';
import {
  Answer,
  authorizationToken,
  Call,
  ForgeStandIn,
  HeldRequest,
  routeOf,
  SchemaPart,
  StandInOptions,
} from './forge-stand-in';

type PullJson = SchemaPart<RestEndpointMethodTypes['pulls']['get']['response']['data']>;
type LabelJson = SchemaPart<RestEndpointMethodTypes['issues']['setLabels']['response']['data'][number]>;

const DOCS = 'https://docs.github.com/rest';

export class GitHubStandIn extends ForgeStandIn {
  /** Repositories whose settings allow auto-merge (GitHub's "Allow auto-merge"). */
  readonly autoMergeAllowed = new Set<string>();

  get apiUrl(): string {
    return this.origin;
  }

  protected authenticated(call: Call): boolean {
    return authorizationToken(call, ['Bearer', 'token']) === this.token;
  }

  unauthorizedAnswer(): Answer {
    return { status: 401, body: { message: 'Bad credentials', documentation_url: DOCS, status: '401' } };
  }

  rateLimitAnswer(seconds: number): Answer {
    const reset = Math.ceil(Date.now() / 1000) + seconds;
    return {
      status: 403,
      headers: {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '5000',
        'x-ratelimit-reset': String(reset),
        'x-ratelimit-resource': 'core',
      },
      body: {
        message:
          'API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.',
        documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
        status: '403',
      },
    };
  }

  protected notFoundBody(): unknown {
    return { message: 'Not Found', documentation_url: DOCS, status: '404' };
  }

  protected route(call: Call): Answer | undefined {
    if (call.method === 'POST' && call.url.pathname === '/graphql') return this.graphql(call);
    const repo = (o: string, r: string) => (this.repositories.has(`${o}/${r}`) ? `${o}/${r}` : undefined);
    return routeOf(call, '', [
      ['GET', /^\/repos\/([^/]+)\/([^/]+)\/pulls$/, (o, r) => this.list(call, repo(o, r))],
      ['POST', /^\/repos\/([^/]+)\/([^/]+)\/pulls$/, (o, r) => this.create(call, repo(o, r))],
      ['GET', /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, (o, r, n) => this.one(repo(o, r), Number(n))],
      ['PATCH', /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, (o, r, n) => this.edit(call, repo(o, r), Number(n))],
      [
        'PUT',
        /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/labels$/,
        (o, r, n) => this.setLabels(call, repo(o, r), Number(n)),
      ],
    ]);
  }

  private list(call: Call, repo: string | undefined): Answer | undefined {
    if (!repo) return undefined;
    const q = call.url.searchParams;
    const state = q.get('state') ?? 'open';
    const [headOwner, headRef] = (q.get('head') ?? ':').split(':');
    const matching = this.requestsOf(repo)
      .filter((r) => state === 'all' || (state === 'open') === (r.state === 'open'))
      .filter((r) => !q.get('head') || (headOwner === (r.fromFork ? 'fork' : repo.split('/')[0]) && r.head === headRef))
      .filter((r) => !q.get('base') || r.base === q.get('base'))
      .reverse(); // newest first: sort=created, direction=desc
    const page = this.page(call, matching, 'per_page', 30, 100);
    return { status: 200, headers: page.headers, body: page.items.map((r) => this.pull(r)) };
  }

  private create(call: Call, repo: string | undefined): Answer | undefined {
    if (!repo) return undefined;
    const { head, base, title, body } = call.json ?? {};
    if (!title || !head || !base)
      return this.invalid([{ resource: 'PullRequest', code: 'missing_field', field: 'title' }]);
    if (!this.headShaOf(repo, head)) return this.invalid([{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
    const owner = repo.split('/')[0];
    if (this.requestsOf(repo).some((r) => !r.fromFork && r.state === 'open' && r.head === head && r.base === base))
      return this.invalid([
        { resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${owner}:${head}.` },
      ]);
    return { status: 201, body: this.pull(this.hold(repo, { head, base, title, body: body ?? '' })) };
  }

  private one(repo: string | undefined, number: number): Answer | undefined {
    const held = repo && this.find(repo, number);
    return held ? { status: 200, body: this.pull(held) } : undefined;
  }

  private edit(call: Call, repo: string | undefined, number: number): Answer | undefined {
    const held = repo && this.find(repo, number);
    if (!held) return undefined;
    const { title, body, state } = call.json ?? {};
    if (title !== undefined) held.title = title;
    if (body !== undefined) held.body = body;
    if (state === 'closed' && held.state === 'open') this.close(held.repo, held.number);
    this.touch(held);
    return { status: 200, body: this.pull(held) };
  }

  /** PUT .../issues/{n}/labels: the labels become exactly these; GitHub creates the ones the repository lacks. */
  private setLabels(call: Call, repo: string | undefined, number: number): Answer | undefined {
    const held = repo && this.find(repo, number);
    if (!held) return undefined;
    const names: unknown = call.json?.labels;
    if (!Array.isArray(names)) return this.invalid([{ resource: 'Label', code: 'invalid', field: 'labels' }]);
    held.labels = names.map(String);
    return { status: 200, body: held.labels.map((n) => this.labelJson(held.repo, n)) };
  }

  /** GraphQL: the one mutation the adapter sends. Errors come with status 200, as GitHub's GraphQL answers them. */
  private graphql(call: Call): Answer {
    const { query, variables } = call.json ?? {};
    if (typeof query !== 'string' || !query.includes('enablePullRequestAutoMerge'))
      return { status: 200, body: { errors: [{ message: 'stand-in: only enablePullRequestAutoMerge is served' }] } };
    const held = this.requests.find((r) => nodeId(r) === variables?.pullRequestId);
    const refuse = (message: string) => ({
      status: 200,
      body: {
        data: { enablePullRequestAutoMerge: null },
        errors: [{ type: 'UNPROCESSABLE', path: ['enablePullRequestAutoMerge'], message }],
      },
    });
    if (!held) return refuse(`Could not resolve to a node with the global id of '${variables?.pullRequestId}'`);
    if (!this.autoMergeAllowed.has(held.repo))
      return refuse('Pull request Auto merge is not allowed for this repository');
    if (held.state !== 'open') return refuse('Pull request is not open');
    if (variables?.expectedHeadOid && variables.expectedHeadOid !== this.currentHead(held))
      return refuse('Head sha did not match expected head oid');
    held.autoMerge = { sha: variables?.expectedHeadOid ?? undefined };
    return { status: 200, body: { data: { enablePullRequestAutoMerge: { clientMutationId: null } } } };
  }

  private invalid(errors: unknown[]): Answer {
    return { status: 422, body: { message: 'Validation Failed', errors, documentation_url: DOCS, status: '422' } };
  }

  private labelJson(repo: string, name: string): LabelJson {
    const l = this.label(repo, name);
    return { id: l.id, node_id: `LA_${l.id}`, name: l.name, color: l.color, default: false, description: null };
  }

  /** A pull request as GitHub's REST API writes it (the fields a client reads). */
  private pull(r: HeldRequest): PullJson {
    const [owner] = r.repo.split('/');
    const merged = r.state === 'merged';
    const closedAt = r.state === 'open' ? null : r.updatedAt;
    return {
      id: r.id,
      node_id: nodeId(r),
      number: r.number,
      url: `${this.origin}/repos/${r.repo}/pulls/${r.number}`,
      html_url: `${this.origin}/${r.repo}/pull/${r.number}`,
      state: r.state === 'open' ? 'open' : 'closed',
      title: r.title,
      body: r.body,
      labels: r.labels.map((n) => this.labelJson(r.repo, n)),
      head: {
        label: `${r.fromFork ? 'fork' : owner}:${r.head}`,
        ref: r.head,
        sha: this.currentHead(r),
        repo: { full_name: r.fromFork ? `fork/${r.repo.split('/')[1]}` : r.repo },
      },
      base: { label: `${owner}:${r.base}`, ref: r.base, repo: { full_name: r.repo } },
      merged,
      merged_at: merged ? r.updatedAt : null,
      closed_at: closedAt,
      // GitHub fills it for an open request too (its test merge); only a merged one's is the merge commit.
      merge_commit_sha: r.mergeCommitSha ?? 'f'.repeat(40),
      auto_merge: r.autoMerge ? { merge_method: 'merge', enabled_by: { login: 'scaffolder' } } : null,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
    };
  }
}

const nodeId = (r: HeldRequest) => `PR_kw${r.id}`;

export async function startGitHubStandIn(options: StandInOptions = {}): Promise<GitHubStandIn> {
  return new GitHubStandIn(options).start();
}
