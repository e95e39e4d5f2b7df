import { DataSource, In, LessThan } from 'typeorm';
// The one file each, not the libraries' indexes: scaffolderctl status reads this without git or the event store.
import { sameRepository } from '#libs/git/repository-url';
import { ACTIVE_STATUSES } from '#libs/run-decider/decider';
import type { ScaffoldRequestedData } from '#libs/events';
import type { RunState } from '#libs/run-decider/decider';
import { ScaffoldRunRow } from './entities';

const ACTIVE = In([...ACTIVE_STATUSES]);

/** What an environment reads of one of its runs: the request's cluster folder and owner, and the run's outcome. */
export interface EnvironmentRun {
  id: string;
  state: Pick<
    RunState,
    'status' | 'infraCommit' | 'fullCommit' | 'finishedAt' | 'updatedAt' | 'reference' | 'gitopsPath'
  > & {
    request: Pick<
      ScaffoldRequestedData,
      'repo_url' | 'branch' | 'cluster_name' | 'cluster_owner' | 'requested_by' | 'domain' | 'region'
    >;
  };
}

/** The request fields an environment shows (src/environments/environment-view.ts). */
const ENVIRONMENT_REQUEST_FIELDS = [
  'repo_url',
  'branch',
  'cluster_name',
  'cluster_owner',
  'requested_by',
  'domain',
  'region',
];

/**
 * The queries the API, the Job watcher and the operators make of the read-model. No framework decorator: the
 * projection module provides it, and scaffolderctl makes one without NestJS.
 */
export class RunReadModel {
  constructor(private readonly ds: DataSource) {}

  private get runs() {
    return this.ds.getRepository(ScaffoldRunRow);
  }

  byId(id: string): Promise<ScaffoldRunRow | null> {
    return this.runs.findOne({ where: { id } });
  }

  /** A queued or running run of this cluster in this repository. */
  /** The active run for this cluster in this repository, however its URL is spelt (https or ssh, .git or not). */
  async activeFor(repoUrl: string, clusterName: string): Promise<ScaffoldRunRow | null> {
    const rows = await this.runs.find({ where: { cluster_name: clusterName, status: ACTIVE } });
    return rows.find((r) => sameRepository(r.repo_url, repoUrl)) ?? null;
  }

  /**
   * The key that owns this cluster's folder in this repository: the owner of the earliest run that
   * claimed it, i.e. is still active or pushed its first pass (a run that ended before pushing wrote
   * nothing). Any URL of the repository (https, ssh, with or without .git) finds it; runs are found by
   * cluster name (indexed) and compared by repository identity here.
   */
  async clusterOwner(repoUrl: string, clusterName: string): Promise<string | undefined> {
    const rows: Array<{ repo_url: string; owner: string }> = await this.ds.query(
      `SELECT repo_url, COALESCE(state->'request'->>'cluster_owner', state->'request'->>'requested_by') AS owner FROM scaffold_runs
       WHERE cluster_name = $1 AND (status = ANY($2) OR infra_commit IS NOT NULL) ORDER BY created_at, id`,
      [clusterName, [...ACTIVE_STATUSES]],
    );
    return rows.find((r) => sameRepository(r.repo_url, repoUrl))?.owner;
  }

  /**
   * The runs environments are made of, oldest first: each that pushed a pass or is still active (a run that ended
   * before pushing wrote nothing), optionally only of one folder owner (cluster_owner, else requested_by) or clusters.
   * Only what an environment shows is read of each run (its request's folder and owner fields, its outcome), not
   * its whole state: a fleet's history is read, not a page of it.
   */
  async environmentRuns(opts: { owner?: string; clusterNames?: string[] }): Promise<EnvironmentRun[]> {
    const where = ['(infra_commit IS NOT NULL OR status = ANY($1))'];
    const params: unknown[] = [[...ACTIVE_STATUSES]];
    if (opts.owner !== undefined) {
      params.push(opts.owner);
      where.push(`COALESCE(state->'request'->>'cluster_owner', state->'request'->>'requested_by') = $${params.length}`);
    }
    if (opts.clusterNames !== undefined) {
      params.push(opts.clusterNames);
      where.push(`cluster_name = ANY($${params.length})`);
    }
    const rows: Array<{ id: string; state: EnvironmentRun['state'] }> = await this.ds.query(
      `SELECT id, jsonb_build_object(
         'status', status, 'infraCommit', infra_commit, 'fullCommit', full_commit,
         'finishedAt', state->'finishedAt', 'updatedAt', state->'updatedAt', 'reference', state->'reference',
         'gitopsPath', state->'gitopsPath',
         'request', jsonb_build_object(${ENVIRONMENT_REQUEST_FIELDS.map((f) => `'${f}', state->'request'->'${f}'`).join(', ')})
       ) AS state
       FROM scaffold_runs WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
      params,
    );
    // jsonb_build_object keeps absent fields as JSON null: an absent cluster_owner or reference is undefined here.
    return rows.map(({ id, state }) => ({
      id,
      state: {
        ...state,
        reference: state.reference ?? undefined,
        gitopsPath: state.gitopsPath ?? undefined,
        request: { ...state.request, cluster_owner: state.request.cluster_owner ?? undefined },
      },
    }));
  }

  active(): Promise<ScaffoldRunRow[]> {
    return this.runs.find({ where: { status: ACTIVE } });
  }

  /** Newest first, after the cursor's (created_at, id), optionally only one status, cluster or key's runs. */
  page(opts: {
    status?: string;
    clusterName?: string;
    after?: { createdAt: Date; id: string };
    owner?: string;
    limit: number;
  }): Promise<ScaffoldRunRow[]> {
    const q = this.runs
      .createQueryBuilder('r')
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .take(opts.limit);
    if (opts.status) q.andWhere('r.status = :status', { status: opts.status });
    if (opts.clusterName !== undefined) q.andWhere('r.cluster_name = :clusterName', { clusterName: opts.clusterName });
    if (opts.owner !== undefined) q.andWhere(`r.state->'request'->>'requested_by' = :owner`, { owner: opts.owner });
    if (opts.after)
      q.andWhere('(r.created_at, r.id) < (:createdAt, :id)', { createdAt: opts.after.createdAt, id: opts.after.id });
    return q.getMany();
  }

  /** How many runs of this key are active, and how many it created since `since` (quotas). */
  async usage(owner: string, since: Date): Promise<{ active: number; createdSince: number }> {
    const [row] = await this.ds.query(
      `SELECT count(*) FILTER (WHERE status = ANY($2)) AS active, count(*) FILTER (WHERE created_at > $3) AS created FROM scaffold_runs WHERE state->'request'->>'requested_by' = $1`,
      [owner, [...ACTIVE_STATUSES], since],
    );
    return { active: Number(row.active), createdSince: Number(row.created) };
  }

  /** Per step (null: before the first), the active runs there and the oldest last event among them (metrics). */
  async activeByStep(): Promise<Array<{ step: string | null; runs: number; lastEventBefore: Date }>> {
    const rows: Array<{ step: string | null; runs: string; oldest: Date }> = await this.ds.query(
      `SELECT step, count(*) AS runs, min(updated_at) AS oldest FROM scaffold_runs WHERE status = ANY($1) GROUP BY step`,
      [[...ACTIVE_STATUSES]],
    );
    return rows.map((r) => ({ step: r.step, runs: Number(r.runs), lastEventBefore: new Date(r.oldest) }));
  }

  /** Active runs without progress since `since`, the longest quiet first (at most `limit`). */
  stuck(since: Date, limit?: number): Promise<ScaffoldRunRow[]> {
    return this.runs.find({
      where: { status: ACTIVE, updated_at: LessThan(since) },
      order: { updated_at: 'ASC' },
      take: limit,
    });
  }
}
