/**
 * Gitea and Forgejo (same API) through gitea-js, the client generated from Gitea's swagger. Gitea's pull
 * list has no head filter, so a branch's requests are found by reading every page. Labels are IDs there: the
 * ones a request names are looked up, and created when the repository lacks them. Auto-merge is the merge
 * call with `merge_when_checks_succeed` and `head_commit_id` (only the pushed commit is merged).
 */
import { Api, giteaApi } from 'gitea-js';
import { ForgeError, MergeRequest, MergeRequestSpec } from '../port/forge-port';
import { ForgeConnection } from '../http/forge-fetch';
import { ForgeAdapter, ownerAndName } from '../adapter/forge-adapter';

/** The fields of a pull request the adapter reads. */
interface GiteaPull {
  number: number;
  html_url: string;
  state: string;
  merged: boolean;
  merge_commit_sha?: string | null;
  head: { ref: string; sha: string; repo_id?: number };
  base: { ref: string; repo_id?: number };
}

/** Gitea's largest page by default (MAX_RESPONSE_ITEMS). */
const PAGE_SIZE = 50;
/** The colour of a label this adapter creates (Gitea requires one). */
const LABEL_COLOR = '#c5def5';
/** More pages than any repository's requests fill: a server whose Link never ends is not followed for ever. */
const MAX_PAGES = 1000;

export class GiteaForge extends ForgeAdapter {
  readonly kind = 'gitea' as const;
  private readonly api: Api<unknown>;

  constructor(connection: ForgeConnection) {
    super('gitea', connection, (token) => ['authorization', `token ${token}`]);
    const host = connection.apiUrl.replace(/\/+$/, '');
    if (!host.endsWith('/api/v1'))
      throw new ForgeError(`gitea API URL ${host} must end in /api/v1 (as https://gitea.example/api/v1)`);
    this.api = giteaApi(host.slice(0, -'/api/v1'.length), { customFetch: this.fetch as typeof fetch });
  }

  protected async listRequests(path: string, head: string, base: string): Promise<MergeRequest[]> {
    const { owner, repo } = ownerAndName(this.kind, path);
    const pulls = await everyPage((page) =>
      this.api.repos.repoListPullRequests(owner, repo, { state: 'all', page, limit: PAGE_SIZE }),
    );
    // A fork's request from a branch of the same name is someone else's: only the repository's own branches count.
    return (pulls as GiteaPull[])
      .filter((p) => p.head.ref === head && p.base.ref === base && p.head.repo_id === p.base.repo_id)
      .map(asMergeRequest);
  }

  protected async createRequest(spec: MergeRequestSpec): Promise<number> {
    const { owner, repo } = ownerAndName(this.kind, spec.repository.path);
    const { data } = await this.api.repos.repoCreatePullRequest(owner, repo, {
      head: spec.head,
      base: spec.base,
      title: spec.title,
      body: spec.body,
    });
    return data.number!;
  }

  protected async editRequest(spec: MergeRequestSpec, number: number): Promise<void> {
    const { owner, repo } = ownerAndName(this.kind, spec.repository.path);
    await this.api.repos.repoEditPullRequest(owner, repo, number, { title: spec.title, body: spec.body });
  }

  protected async setLabels(path: string, number: number, labels: readonly string[]): Promise<void> {
    const { owner, repo } = ownerAndName(this.kind, path);
    const ids = await this.labelIds(owner, repo, labels);
    await this.api.repos.issueReplaceLabels(owner, repo, number, { labels: ids });
  }

  /** The IDs of the named labels, creating those the repository lacks. */
  private async labelIds(owner: string, repo: string, names: readonly string[]): Promise<number[]> {
    if (names.length === 0) return [];
    const existing = await everyPage((page) => this.api.repos.issueListLabels(owner, repo, { page, limit: PAGE_SIZE }));
    const byName = new Map(existing.map((l) => [l.name!, l.id!]));
    const ids: number[] = [];
    for (const name of names) {
      const id =
        byName.get(name) ?? (await this.api.repos.issueCreateLabel(owner, repo, { name, color: LABEL_COLOR })).data.id!;
      ids.push(id);
    }
    return ids;
  }

  protected async enableAutoMerge(spec: MergeRequestSpec, number: number): Promise<void> {
    const { owner, repo } = ownerAndName(this.kind, spec.repository.path);
    await this.api.repos.repoMergePullRequest(owner, repo, number, {
      Do: 'merge',
      merge_when_checks_succeed: true,
      ...(spec.headSha ? { head_commit_id: spec.headSha } : {}),
    });
  }

  protected async getRequest(path: string, number: number): Promise<MergeRequest> {
    const { owner, repo } = ownerAndName(this.kind, path);
    return asMergeRequest((await this.api.repos.repoGetPullRequest(owner, repo, number)).data as GiteaPull);
  }

  protected async closeRequest(path: string, number: number): Promise<void> {
    const { owner, repo } = ownerAndName(this.kind, path);
    await this.api.repos.repoEditPullRequest(owner, repo, number, { state: 'closed' });
  }
}

/** Every page of a Gitea list: the next one while the answer's Link header names one. */
async function everyPage<T>(pageOf: (page: number) => Promise<{ data: T[]; headers: Headers }>): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await pageOf(page);
    all.push(...answer.data);
    if (!/rel="next"/.test(answer.headers.get('link') ?? '') || answer.data.length === 0) return all;
  }
  throw new ForgeError(`gitea: a list went on for more than ${MAX_PAGES} pages`);
}

/** Gitea reports a merged pull request as `closed` with `merged: true`; `open` wins, as on GitHub. */
function asMergeRequest(pull: GiteaPull): MergeRequest {
  const state = pull.state === 'open' ? 'open' : pull.merged ? 'merged' : 'closed';
  return {
    number: pull.number,
    url: pull.html_url,
    state,
    head: pull.head.ref,
    base: pull.base.ref,
    headSha: pull.head.sha,
    ...(state === 'merged' && pull.merge_commit_sha ? { mergeCommitSha: pull.merge_commit_sha } : {}),
  };
}
