/**
 * Gitea's (and Forgejo's) REST API (v1) for pull requests as its swagger describes it: `/api/v1/repos/...`,
 * `Authorization: token` (or Bearer), `limit` up to 50 with `Link` and `X-Total-Count`, labels by ID (created
 * through `/labels`), 409 "pull request already exists for these targets [...]", 404 "The target couldn't be
 * found.", 401, and 429 with `Retry-After` as a proxy in front of it answers. The merge call with
 * `merge_when_checks_succeed` schedules the merge for when the checks pass, which the test decides.
 */
import type { PullRequest } from 'gitea-js';
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

const PREFIX = '/api/v1';

export class GiteaStandIn extends ForgeStandIn {
  get apiUrl(): string {
    return `${this.origin}${PREFIX}`;
  }

  private get swagger() {
    return `${this.origin}/api/swagger`;
  }

  protected authenticated(call: Call): boolean {
    return authorizationToken(call, ['token', 'Bearer']) === this.token;
  }

  unauthorizedAnswer(): Answer {
    return { status: 401, body: { message: 'user does not exist [uid: 0, name: ]', url: this.swagger } };
  }

  rateLimitAnswer(seconds: number): Answer {
    return { status: 429, headers: { 'retry-after': String(seconds) }, body: { message: 'Too Many Requests' } };
  }

  protected notFoundBody(): unknown {
    return { errors: ["The target couldn't be found."], message: "The target couldn't be found.", url: this.swagger };
  }

  protected route(call: Call): Answer | undefined {
    const repo = (o: string, r: string) => (this.repositories.has(`${o}/${r}`) ? `${o}/${r}` : undefined);
    const base = /^\/repos\/([^/]+)\/([^/]+)/.source;
    const at = (tail: string) => new RegExp(`${base}${tail}$`);
    return routeOf(call, PREFIX, [
      ['GET', at('/pulls'), (o, r) => this.list(call, repo(o, r))],
      ['POST', at('/pulls'), (o, r) => this.create(call, repo(o, r))],
      ['GET', at('/pulls/(\\d+)'), (o, r, n) => this.one(repo(o, r), Number(n))],
      ['PATCH', at('/pulls/(\\d+)'), (o, r, n) => this.edit(call, repo(o, r), Number(n))],
      ['POST', at('/pulls/(\\d+)/merge'), (o, r, n) => this.mergeCall(call, repo(o, r), Number(n))],
      ['PUT', at('/issues/(\\d+)/labels'), (o, r, n) => this.replaceLabels(call, repo(o, r), Number(n))],
      ['GET', at('/labels'), (o, r) => this.listLabels(call, repo(o, r))],
      ['POST', at('/labels'), (o, r) => this.createLabel(call, repo(o, r))],
    ]);
  }

  private list(call: Call, repo: string | undefined): Answer | undefined {
    if (!repo) return undefined;
    const state = call.url.searchParams.get('state') ?? 'open';
    const matching = this.requestsOf(repo)
      .filter((r) => state === 'all' || (state === 'open') === (r.state === 'open'))
      .reverse(); // newest first
    const page = this.page(call, matching, 'limit', 50, 50);
    return {
      status: 200,
      headers: { ...page.headers, 'x-total-count': String(matching.length) },
      body: page.items.map((r) => this.pull(r)),
    };
  }

  private create(call: Call, repo: string | undefined): Answer | undefined {
    if (!repo) return undefined;
    const { head, base, title, body, labels } = call.json ?? {};
    if (!this.headShaOf(repo, head)) return undefined;
    const open = this.requestsOf(repo).find(
      (r) => !r.fromFork && r.state === 'open' && r.head === head && r.base === base,
    );
    if (open)
      return {
        status: 409,
        body: {
          message: `pull request already exists for these targets [id: ${open.id}, issue_id: ${open.id + 1}, head_repo_id: 1, base_repo_id: 1, head_branch: ${head}, base_branch: ${base}]`,
          url: this.swagger,
        },
      };
    const held = this.hold(repo, { head, base, title: title ?? '', body: body ?? '' });
    if (Array.isArray(labels)) held.labels = this.labelNames(repo, labels) ?? [];
    return { status: 201, body: this.pull(held) };
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
    return { status: 201, body: this.pull(held) };
  }

  private mergeCall(call: Call, repo: string | undefined, number: number): Answer | undefined {
    const held = repo && this.find(repo, number);
    if (!held) return undefined;
    const { head_commit_id: sha, merge_when_checks_succeed: whenChecks } = call.json ?? {};
    if (held.state !== 'open')
      return { status: 405, body: { message: 'The PR is already merged or closed', url: this.swagger } };
    if (sha && sha !== this.currentHead(held))
      return { status: 409, body: { message: 'head out of date', url: this.swagger } };
    if (whenChecks) held.autoMerge = { sha };
    else this.merge(held.repo, held.number);
    return { status: 200, body: '' };
  }

  /** PUT .../issues/{n}/labels: exactly these label IDs (or names of existing labels); an unknown one is refused. */
  private replaceLabels(call: Call, repo: string | undefined, number: number): Answer | undefined {
    const held = repo && this.find(repo, number);
    if (!held) return undefined;
    const names = this.labelNames(held.repo, call.json?.labels ?? []);
    if (!names) return { status: 422, body: { message: 'label does not exist', url: this.swagger } };
    held.labels = names;
    return { status: 200, body: names.map((n) => this.label(held.repo, n)) };
  }

  /** The names of label IDs (or names) of the repository; undefined when one does not exist. */
  private labelNames(repo: string, refs: unknown[]): string[] | undefined {
    const list = this.labels.get(repo) ?? [];
    const names = refs.map((ref) => list.find((l) => l.id === ref || l.name === ref)?.name);
    return names.every((n): n is string => n !== undefined) ? names : undefined;
  }

  private listLabels(call: Call, repo: string | undefined): Answer | undefined {
    if (!repo) return undefined;
    const all = this.labels.get(repo) ?? [];
    const page = this.page(call, all, 'limit', 50, 50);
    return { status: 200, headers: { ...page.headers, 'x-total-count': String(all.length) }, body: page.items };
  }

  private createLabel(call: Call, repo: string | undefined): Answer | undefined {
    if (!repo) return undefined;
    const { name, color } = call.json ?? {};
    if (!name || !/^#?[0-9a-fA-F]{6}$/.test(color ?? ''))
      return { status: 422, body: { message: '[Color]: Color is not valid', url: this.swagger } };
    return { status: 201, body: this.label(repo, name, color.replace(/^#/, '')) };
  }

  /** A pull request as Gitea's API writes it (the fields a client reads). */
  private pull(r: HeldRequest): SchemaPart<PullRequest> {
    const [owner] = r.repo.split('/');
    const merged = r.state === 'merged';
    return {
      id: r.id,
      number: r.number,
      url: `${this.origin}/${r.repo}/pulls/${r.number}`,
      html_url: `${this.origin}/${r.repo}/pulls/${r.number}`,
      state: r.state === 'open' ? 'open' : 'closed',
      title: r.title,
      body: r.body,
      labels: r.labels.map((n) => this.label(r.repo, n)),
      head: {
        label: r.head,
        ref: r.head,
        sha: this.currentHead(r),
        repo_id: r.fromFork ? 2 : 1,
        repo: { full_name: r.fromFork ? `fork/${r.repo.split('/')[1]}` : r.repo },
      },
      base: { label: r.base, ref: r.base, repo_id: 1, repo: { full_name: r.repo, owner: { login: owner } } },
      merged,
      merged_at: merged ? r.updatedAt : null,
      merge_commit_sha: r.mergeCommitSha ?? null,
      closed_at: r.state === 'open' ? null : r.updatedAt,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
    };
  }
}

export async function startGiteaStandIn(options: StandInOptions = {}): Promise<GiteaStandIn> {
  return new GiteaStandIn(options).start();
}
