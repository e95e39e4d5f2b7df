/**
 * GitLab's REST API (v4) for merge requests as docs.gitlab.com describes it: `/api/v4/projects/:id/...` with
 * the project's full path URL-encoded as its id, `PRIVATE-TOKEN` or `Authorization: Bearer`, `per_page` up to
 * 100 with `x-page`/`x-next-page`/`x-total` and `Link`, 409 `["Another open merge request already exists for
 * this source branch: !N"]`, `404 Not found`, `401 Unauthorized`, and 429 with `Retry-After` and `RateLimit-*`.
 * Labels named on a request are created in the project, as GitLab does.
 */
import type { MergeRequestSchema } from '@gitbeaker/core';
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

const PREFIX = '/api/v4';

export class GitLabStandIn extends ForgeStandIn {
  get apiUrl(): string {
    return `${this.origin}${PREFIX}`;
  }

  protected authenticated(call: Call): boolean {
    return call.headers['private-token'] === this.token || authorizationToken(call, ['Bearer']) === this.token;
  }

  unauthorizedAnswer(): Answer {
    return { status: 401, body: { message: '401 Unauthorized' } };
  }

  rateLimitAnswer(seconds: number): Answer {
    const reset = Math.ceil(Date.now() / 1000) + seconds;
    return {
      status: 429,
      headers: {
        'retry-after': String(seconds),
        'ratelimit-limit': '600',
        'ratelimit-observed': '600',
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(reset),
        'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
      },
      body: 'Retry later\n',
    };
  }

  protected notFoundBody(): unknown {
    return { message: '404 Not found' };
  }

  protected route(call: Call): Answer | undefined {
    // The project id is one path segment: the full path with its "/" encoded (group%2Fsub%2Fname), or a number.
    const project = (id: string) => (this.repositories.has(id) ? id : undefined);
    const notFound = (what: string) => ({ status: 404, body: { message: `404 ${what} Not Found` } });
    const answer = routeOf(call, PREFIX, [
      ['GET', /^\/projects\/([^/]+)\/merge_requests$/, (p) => this.list(call, project(p))],
      ['POST', /^\/projects\/([^/]+)\/merge_requests$/, (p) => this.create(call, project(p))],
      ['GET', /^\/projects\/([^/]+)\/merge_requests\/(\d+)$/, (p, n) => this.one(project(p), Number(n))],
      ['PUT', /^\/projects\/([^/]+)\/merge_requests\/(\d+)$/, (p, n) => this.edit(call, project(p), Number(n))],
      [
        'PUT',
        /^\/projects\/([^/]+)\/merge_requests\/(\d+)\/merge$/,
        (p, n) => this.merge_(call, project(p), Number(n)),
      ],
    ]);
    return answer ?? (call.url.pathname.includes('/merge_requests') ? notFound('Merge Request') : undefined);
  }

  private list(call: Call, project: string | undefined): Answer | undefined {
    if (!project) return undefined;
    const q = call.url.searchParams;
    const state = q.get('state') ?? 'all';
    const matching = this.requestsOf(project)
      .filter((r) => state === 'all' || gitlabState(r) === state)
      .filter((r) => !q.get('source_branch') || r.head === q.get('source_branch'))
      .filter((r) => !q.get('target_branch') || r.base === q.get('target_branch'))
      .reverse(); // order_by=created_at, sort=desc
    const page = this.page(call, matching, 'per_page', 20, 100);
    const headers: Record<string, string> = {
      ...page.headers,
      'x-page': String(page.page),
      'x-per-page': String(page.size),
      'x-total': String(matching.length),
      'x-total-pages': String(page.last),
      'x-next-page': page.page < page.last ? String(page.page + 1) : '',
      'x-prev-page': page.page > 1 ? String(page.page - 1) : '',
    };
    return { status: 200, headers, body: page.items.map((r) => this.mergeRequest(r)) };
  }

  private create(call: Call, project: string | undefined): Answer | undefined {
    if (!project) return undefined;
    const { source_branch: head, target_branch: base, title, description, labels } = call.json ?? {};
    if (!title) return { status: 400, body: { message: { title: ["can't be blank"] } } };
    if (!this.headShaOf(project, head)) return { status: 422, body: { message: ['Source branch does not exist'] } };
    const open = this.requestsOf(project).find(
      (r) => !r.fromFork && r.state === 'open' && r.head === head && r.base === base,
    );
    if (open)
      return {
        status: 409,
        body: { message: [`Another open merge request already exists for this source branch: !${open.number}`] },
      };
    const held = this.hold(project, { head, base, title, body: description ?? '' });
    if (labels !== undefined) this.setLabels(held, labels);
    return { status: 201, body: this.mergeRequest(held) };
  }

  private one(project: string | undefined, number: number): Answer | undefined {
    const held = project && this.find(project, number);
    return held ? { status: 200, body: this.mergeRequest(held) } : undefined;
  }

  private edit(call: Call, project: string | undefined, number: number): Answer | undefined {
    const held = project && this.find(project, number);
    if (!held) return undefined;
    const { title, description, labels, state_event: stateEvent } = call.json ?? {};
    if (title !== undefined) held.title = title;
    if (description !== undefined) held.body = description;
    if (labels !== undefined) this.setLabels(held, labels);
    if (stateEvent === 'close' && held.state === 'open') this.close(held.repo, held.number);
    this.touch(held);
    return { status: 200, body: this.mergeRequest(held) };
  }

  /** PUT .../merge: with auto_merge (or merge_when_pipeline_succeeds) it waits for the pipeline, which the test runs. */
  private merge_(call: Call, project: string | undefined, number: number): Answer | undefined {
    const held = project && this.find(project, number);
    if (!held) return undefined;
    const { sha, auto_merge: autoMerge, merge_when_pipeline_succeeds: whenPipeline } = call.json ?? {};
    if (held.state !== 'open') return { status: 405, body: { message: '405 Method Not Allowed' } };
    if (sha && sha !== this.currentHead(held))
      return { status: 409, body: { message: `SHA does not match HEAD of source branch: ${this.currentHead(held)}` } };
    if (autoMerge || whenPipeline) held.autoMerge = { sha };
    else this.merge(held.repo, held.number);
    return { status: 200, body: this.mergeRequest(held) };
  }

  /** `labels` as GitLab takes it: a comma-separated string (or an array); missing labels are created. */
  private setLabels(held: HeldRequest, labels: unknown): void {
    const names = Array.isArray(labels) ? labels.map(String) : String(labels).split(',');
    held.labels = names.map((n) => n.trim()).filter((n) => n !== '');
    for (const name of held.labels) this.label(held.repo, name);
  }

  /** A merge request as GitLab's API writes it (the fields a client reads). */
  private mergeRequest(r: HeldRequest): SchemaPart<MergeRequestSchema> {
    return {
      id: r.id,
      iid: r.number,
      project_id: 1,
      source_project_id: r.fromFork ? 2 : 1,
      target_project_id: 1,
      title: r.title,
      description: r.body,
      state: gitlabState(r),
      web_url: `${this.origin}/${r.repo}/-/merge_requests/${r.number}`,
      source_branch: r.head,
      target_branch: r.base,
      sha: this.currentHead(r),
      merge_commit_sha: r.mergeCommitSha ?? null,
      squash_commit_sha: null,
      labels: r.labels,
      merge_when_pipeline_succeeds: r.autoMerge !== undefined,
      merged_at: r.state === 'merged' ? r.updatedAt : null,
      closed_at: r.state === 'closed' ? r.updatedAt : null,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
    };
  }
}

const gitlabState = (r: HeldRequest) => (r.state === 'open' ? 'opened' : r.state);

export async function startGitLabStandIn(options: StandInOptions = {}): Promise<GitLabStandIn> {
  return new GitLabStandIn(options).start();
}
