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

  /** Newest first, before a creation time (the list cursor). */
  page(opts: { status?: string; before?: Date; limit: number }): Promise<ScaffoldRunRow[]> {
    return this.runs.find({
      where: { ...(opts.status ? { status: opts.status } : {}), ...(opts.before ? { created_at: LessThan(opts.before) } : {}) },
      order: { created_at: 'DESC', id: 'DESC' },
      take: opts.limit,
    });
  }

  /** Active runs without progress since `since`. */
  stuck(since: Date): Promise<ScaffoldRunRow[]> {
    return this.runs.find({ where: { status: ACTIVE, updated_at: LessThan(since) }, order: { updated_at: 'ASC' } });
  }
}
