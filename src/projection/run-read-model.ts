import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, LessThan } from 'typeorm';
import { ACTIVE_STATUSES } from '../../libs/run-decider/src';
import { ScaffoldRunRow } from './entities';

const ACTIVE = In([...ACTIVE_STATUSES]);

/** The queries the API, the Job watcher and the operators make of the read-model. */
@Injectable()
export class RunReadModel {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  private get runs() {
    return this.ds.getRepository(ScaffoldRunRow);
  }

  byId(id: string): Promise<ScaffoldRunRow | null> {
    return this.runs.findOne({ where: { id } });
  }

  /** A queued or running run of this cluster in this repository. */
  activeFor(repoUrl: string, clusterName: string): Promise<ScaffoldRunRow | null> {
    return this.runs.findOne({ where: { repo_url: repoUrl, cluster_name: clusterName, status: ACTIVE } });
  }

  active(): Promise<ScaffoldRunRow[]> {
    return this.runs.find({ where: { status: ACTIVE } });
  }

  /** Newest first, after the cursor's (created_at, id), optionally only one key's runs. */
  page(opts: { status?: string; after?: { createdAt: Date; id: string }; owner?: string; limit: number }): Promise<ScaffoldRunRow[]> {
    const q = this.runs.createQueryBuilder('r').orderBy('r.created_at', 'DESC').addOrderBy('r.id', 'DESC').take(opts.limit);
    if (opts.status) q.andWhere('r.status = :status', { status: opts.status });
    if (opts.owner !== undefined) q.andWhere(`r.state->'request'->>'requested_by' = :owner`, { owner: opts.owner });
    if (opts.after) q.andWhere('(r.created_at, r.id) < (:createdAt, :id)', { createdAt: opts.after.createdAt, id: opts.after.id });
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

  /** Active runs without progress since `since`. */
  stuck(since: Date): Promise<ScaffoldRunRow[]> {
    return this.runs.find({ where: { status: ACTIVE, updated_at: LessThan(since) }, order: { updated_at: 'ASC' } });
  }
}
