import { Inject, Injectable } from '@nestjs/common';
import { invalid, notFound } from '../common/api-error';
import type { EnvironmentView } from '../common/api-shapes';
import { CallerIdentity } from '../common/api-keys';
import { clusterFilter, fromReadModel, pageLimit } from '../common/list-queries';
import { RunReadModel } from '../projection/run-read-model';
import {
  EnvironmentRun,
  groupByEnvironment,
  ownerOfEnvironment,
  ReferenceDistance,
  toEnvironmentView,
} from './environment-view';
import { REFERENCE_HISTORY, type ReferenceHistory } from './reference-history';

/** An environment id as this API makes them (environmentId); anything else is a 404 without a read. */
const ENVIRONMENT_ID = /^[0-9a-f]{32}$/;

/** A list's cursor: the last environment's id of the page before (environments are listed by id). */
const cursorAfter = (cursor: unknown) =>
  typeof cursor === 'string' && ENVIRONMENT_ID.test(cursor) ? cursor : undefined;

/**
 * The environments' reads, behind both the REST and the NATS API: the runs of the read-model folded per
 * environment, and where each stands against the reference's newest commit. Nothing here appends.
 * A key sees the environments whose folder it owns (an admin every one); another key's is a 404, as a run is.
 */
@Injectable()
export class EnvironmentQueries {
  constructor(
    private readonly readModel: RunReadModel,
    @Inject(REFERENCE_HISTORY) private readonly history: ReferenceHistory,
  ) {}

  async list(
    query: { cluster_name?: unknown; limit?: unknown; cursor?: unknown },
    caller: CallerIdentity,
  ): Promise<{ items: EnvironmentView[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit, 50, 500);
    const clusterName = clusterFilter(query.cluster_name);
    const after = query.cursor === undefined ? undefined : cursorAfter(query.cursor);
    if (query.cursor !== undefined && after === undefined) throw invalid('cursor', 'is not a cursor this API returned');
    const groups = await this.environments(caller, clusterName);
    const ids = [...groups.keys()].sort().filter((id) => after === undefined || id > after);
    const page = ids.slice(0, limit);
    const items = await Promise.all(page.map((id) => this.view(id, groups.get(id)!)));
    return { items, next_cursor: ids.length > limit ? page[page.length - 1] : null };
  }

  async get(id: unknown, caller: CallerIdentity): Promise<EnvironmentView> {
    if (typeof id !== 'string' || !ENVIRONMENT_ID.test(id)) throw notFound();
    const runs = (await this.environments(caller)).get(id);
    if (!runs) throw notFound();
    return this.view(id, runs);
  }

  /**
   * The caller's environments (an admin's: every one), each with all its runs oldest first. A key's are the folders
   * whose first run it owns: the clusters it ran are found first, then every run of them (an admin's run of its
   * folder included), and a folder another key ran first is left out.
   */
  private async environments(caller: CallerIdentity, clusterName?: string): Promise<Map<string, EnvironmentRun[]>> {
    const owner = caller.role === 'admin' ? undefined : caller.name;
    const clusterNames = clusterName === undefined ? undefined : [clusterName];
    const runs = await fromReadModel(async () => {
      if (owner === undefined) return this.readModel.environmentRuns({ clusterNames });
      const own = await this.readModel.environmentRuns({ owner, clusterNames });
      const clusters = [...new Set(own.map((r) => r.state.request.cluster_name))];
      return clusters.length === 0 ? [] : this.readModel.environmentRuns({ clusterNames: clusters });
    });
    const groups = groupByEnvironment(runs.filter((r) => r.state.request));
    if (owner !== undefined) for (const [id, rs] of groups) if (ownerOfEnvironment(rs) !== owner) groups.delete(id);
    return groups;
  }

  private async view(id: string, runs: EnvironmentRun[]): Promise<EnvironmentView> {
    return toEnvironmentView(id, runs, await this.distance(runs));
  }

  /** How far the environment's recorded reference commit is behind the reference's newest. */
  private async distance(runs: EnvironmentRun[]): Promise<ReferenceDistance> {
    const newest = (await this.history.newest()) ?? null;
    const recorded = [...runs].reverse().find((r) => r.state.reference)?.state.reference?.commit;
    const commitsBehind = newest && recorded ? ((await this.history.behind(recorded, newest)) ?? null) : null;
    return { newest, commitsBehind };
  }
}
