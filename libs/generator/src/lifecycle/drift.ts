/**
 * Drift of one environment, read-only: how far its recorded reference commit is behind the reference's
 * newest, and every file of its folders that differs from what the recorded commit renders with the
 * recorded inputs now. Nothing is written anywhere but a scratch folder, removed afterwards.
 */
import type { RepoLimits } from '#libs/runtime';
import { repoLimits, withRepoLimits } from '../repo-files';
import { openRecordedEnvironment, RecordedEnvironmentRequest, withScratch } from './recorded-environment';
import { commitsBetween, GIT_PROGRAM, GitRunner } from '../reference-git';
import { renderAtCommit } from './render-at-commit';
import { compareTrees, TreeDifference } from './tree-compare';

/** `to`: the reference revision to count commits behind to (default HEAD). */
export interface DriftRequest extends RecordedEnvironmentRequest {
  repoLimits?: RepoLimits;
}

export interface DriftReport extends TreeDifference {
  cluster_name: string;
  /** The environment's folders in the repository (those whose marker names the cluster). */
  folders: string[];
  reference_commit: string;
  /** The commit --to names (the reference's HEAD by default). */
  reference_newest: string;
  commits_behind: number;
  /** Whether any file was changed, added or is missing (credentials are never drift by value). */
  drifted: boolean;
  warnings: string[];
}

/** Drift of the environment `clusterName` in `repoDir` against the reference `templateDir`. Refusals are GeneratorInputErrors. */
export function computeDrift(request: DriftRequest, git: GitRunner = GIT_PROGRAM): Promise<DriftReport> {
  return withRepoLimits(request.repoLimits, () => driftWithinLimits(request, git));
}

async function driftWithinLimits(request: DriftRequest, git: GitRunner): Promise<DriftReport> {
  const { repoDir, environment, referenceTop, recorded, newest } = openRecordedEnvironment(
    request,
    'compute drift',
    git,
  );
  const { marker } = environment;
  return withScratch('gitops-drift-', async (scratch) => {
    const render = await renderAtCommit(referenceTop, recorded, marker, scratch, repoLimits(), git);
    const credentials = new Set(render.summary.objects_sealed.flatMap((o) => [o.file, ...(o.sources ?? [])]));
    const difference = compareTrees(
      { root: repoDir, folders: environment.folders },
      { root: render.repoDir, folders: render.folders, credentials },
    );
    return {
      cluster_name: request.clusterName,
      folders: environment.folders,
      reference_commit: recorded,
      reference_newest: newest,
      commits_behind: commitsBetween(referenceTop, recorded, newest, git),
      ...difference,
      drifted: difference.changed.length + difference.added.length + difference.missing.length > 0,
      warnings: marker.reference_dirty
        ? [
            `the reference had uncommitted changes when cluster ${request.clusterName} was scaffolded: files may differ because ${recorded.slice(0, 12)} alone does not reproduce them`,
          ]
        : [],
    };
  });
}

/** The report as text for a person: the commits, then each list, then whether the environment drifted. */
export function describeDrift(report: DriftReport): string {
  const short = (commit: string) => commit.slice(0, 12);
  const lines = [
    `cluster ${report.cluster_name} (${report.folders.join(', ')})`,
    `reference commit ${short(report.reference_commit)}, newest ${short(report.reference_newest)}: ${report.commits_behind} commit${report.commits_behind === 1 ? '' : 's'} behind`,
  ];
  const list = (title: string, paths: string[]) => {
    if (paths.length > 0) lines.push(`${title}:`, ...paths.map((p) => `  ${p}`));
  };
  list('changed (differs from what the recorded commit renders)', report.changed);
  list('added (not rendered by the recorded commit)', report.added);
  list('missing (rendered by the recorded commit, absent here)', report.missing);
  list('credentials, not compared', report.credentials_not_compared);
  lines.push(...report.warnings.map((w) => `warning: ${w}`));
  lines.push(report.drifted ? 'drift: the environment differs from its recorded reference commit' : 'no drift');
  return lines.join('\n') + '\n';
}
