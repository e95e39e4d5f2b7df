/**
 * GitLab (gitlab.com and self-managed) through gitbeaker's resources (@gitbeaker/core, which @gitbeaker/rest
 * presets with a requester of its own). That requester retries 429 and 502 ten times by itself, ignoring the
 * forge's Retry-After, and sends through the global fetch; this adapter gives gitbeaker a requester over the
 * service's forge fetch instead, so a rate limit reaches the run as a ForgeError with the forge's wait.
 * Labels are a comma-separated list GitLab creates missing labels from; auto-merge is
 * `PUT .../merge_requests/:iid/merge` with `auto_merge` (GitLab 17.11 and later) and its older name
 * `merge_when_pipeline_succeeds`, and `sha`, so only the pushed commit is merged.
 */
import { MergeRequests } from '@gitbeaker/core';
import { createRequesterFn, FormattedResponse, RequestOptions } from '@gitbeaker/requester-utils';
import { ForgeError, MergeRequest, MergeRequestSpec } from '../port/forge-port';
import { ForgeConnection, ForgeFetch } from '../http/forge-fetch';
import { ForgeAdapter } from '../adapter/forge-adapter';

/** The fields of a merge request the adapter reads. */
interface GitLabMergeRequest {
  iid: number;
  web_url: string;
  state: string;
  source_branch: string;
  target_branch: string;
  source_project_id?: number;
  target_project_id?: number;
  sha: string;
  merge_commit_sha?: string | null;
  squash_commit_sha?: string | null;
}

/** GitLab's largest page. */
const PER_PAGE = 100;

export class GitLabForge extends ForgeAdapter {
  readonly kind = 'gitlab' as const;
  private readonly requests: MergeRequests<false>;

  constructor(connection: ForgeConnection) {
    super('gitlab', connection, (token) => ['private-token', token]);
    const host = connection.apiUrl.replace(/\/+$/, '');
    if (!host.endsWith('/api/v4'))
      throw new ForgeError(`gitlab API URL ${host} must end in /api/v4 (as https://gitlab.example/api/v4)`);
    this.requests = new MergeRequests({
      host: host.slice(0, -'/api/v4'.length),
      requesterFn: createRequesterFn((_, options) => Promise.resolve(options), gitbeakerHandler(this.fetch)),
      camelize: false,
    });
  }

  protected async listRequests(path: string, head: string, base: string): Promise<MergeRequest[]> {
    // Every page: gitbeaker follows the Link header's next page until there is none.
    const all = (await this.requests.all({
      projectId: path,
      sourceBranch: head,
      targetBranch: base,
      perPage: PER_PAGE,
    })) as unknown as GitLabMergeRequest[];
    // A fork's merge request from a branch of the same name is someone else's: only the project's own branches count.
    return all
      .filter(
        (r) => r.source_branch === head && r.target_branch === base && r.source_project_id === r.target_project_id,
      )
      .map(asMergeRequest);
  }

  protected async createRequest(spec: MergeRequestSpec): Promise<number> {
    const created = (await this.requests.create(spec.repository.path, spec.head, spec.base, spec.title, {
      description: spec.body,
    })) as unknown as GitLabMergeRequest;
    return created.iid;
  }

  protected async editRequest(spec: MergeRequestSpec, number: number): Promise<void> {
    await this.requests.edit(spec.repository.path, number, { title: spec.title, description: spec.body });
  }

  protected async setLabels(path: string, number: number, labels: readonly string[]): Promise<void> {
    await this.requests.edit(path, number, { labels: labels.join(',') });
  }

  protected async enableAutoMerge(spec: MergeRequestSpec, number: number): Promise<void> {
    await this.requests.merge(spec.repository.path, number, {
      mergeWhenPipelineSucceeds: true,
      autoMerge: true,
      ...(spec.headSha ? { sha: spec.headSha } : {}),
    } as Record<string, unknown>);
  }

  protected async getRequest(path: string, number: number): Promise<MergeRequest> {
    return asMergeRequest((await this.requests.show(path, number)) as unknown as GitLabMergeRequest);
  }

  protected async closeRequest(path: string, number: number): Promise<void> {
    await this.requests.edit(path, number, { stateEvent: 'close' });
  }
}

/**
 * gitbeaker's request handler over the forge fetch: the URL as gitbeaker's own builds it (endpoint under the
 * API URL, its query string), the answer as gitbeaker reads it (JSON body, headers as a record: the Link header
 * for the next page). Errors are the fetch's ForgeErrors; nothing is retried here.
 */
function gitbeakerHandler(fetch: ForgeFetch) {
  return async (endpoint: string, options?: Record<string, unknown>): Promise<FormattedResponse> => {
    const { prefixUrl, searchParams, method, headers, body, signal } = (options ?? {}) as RequestOptions & {
      prefixUrl: string;
    };
    const url = new URL(endpoint, prefixUrl.endsWith('/') ? prefixUrl : `${prefixUrl}/`);
    url.search = typeof searchParams === 'string' ? searchParams : '';
    const response = await fetch(url, { method, headers, body: body as string | undefined, signal });
    const text = response.status === 204 ? '' : await response.text();
    const json = (response.headers.get('content-type') ?? '').includes('json') && text !== '';
    return {
      body: json ? JSON.parse(text) : text,
      headers: Object.fromEntries(response.headers),
      status: response.status,
    };
  };
}

/** GitLab's `opened` and `locked` (being merged) are open; `merged`; `closed`. A squash merge has its own sha. */
function asMergeRequest(r: GitLabMergeRequest): MergeRequest {
  const state = r.state === 'merged' ? 'merged' : r.state === 'closed' ? 'closed' : 'open';
  const mergeCommitSha = state === 'merged' ? (r.merge_commit_sha ?? r.squash_commit_sha ?? undefined) : undefined;
  return {
    number: r.iid,
    url: r.web_url,
    state,
    head: r.source_branch,
    base: r.target_branch,
    headSha: r.sha,
    ...(mergeCommitSha ? { mergeCommitSha } : {}),
  };
}
