/**
 * Drift of one environment, read-only: how far its recorded reference commit is behind the reference's
 * newest, and every file of its folders that differs from what the recorded commit renders with the
 * recorded inputs now. Nothing is written anywhere but a scratch folder, removed afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RepoLimits } from '#libs/runtime';
import { GeneratorInputError } from '../errors';
import { repoLimits, withRepoLimits } from '../repo-files';
import { Environment, findEnvironment } from './environment-markers';
import { commitsBetween, GIT_PROGRAM, GitRunner, inHistoryOf, resolveCommit } from './reference-git';
import { renderAtCommit } from './render-at-commit';
import { compareTrees, TreeDifference } from './tree-compare';

export interface DriftRequest {
  /** The environment repository's working copy. */
  repoDir: string;
  /** A git working copy of the reference (any folder of it). */
  templateDir: string;
  clusterName: string;
  /** The reference revision to count commits behind to (default HEAD). */
  to?: string;
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

/** Why an environment's marker cannot be rendered again, or null. */
function unrenderable(environment: Environment, clusterName: string): string | null {
  const { marker } = environment;
  if (marker.marker_version === undefined || !marker.inputs)
    return `cluster ${clusterName} was scaffolded before markers recorded the reference commit; cannot compute drift`;
  if (!marker.reference_commit)
    return `cluster ${clusterName} was scaffolded from a reference that was no git working copy (its marker records no reference commit); cannot compute drift`;
  if (marker.in_reference_repository)
    return `cluster ${clusterName} was written into the reference's own working copy; drift is computed for environments in another repository only`;
  return null;
}

/** The top of the reference's working copy, refused when `dir` is none. */
function referenceTop(dir: string, git: GitRunner): string {
  try {
    return git.run(dir, ['rev-parse', '--show-toplevel']).trim();
  } catch {
    throw new GeneratorInputError(`--template ${dir} is not a git working copy of the reference`);
  }
}

/** Drift of the environment `clusterName` in `repoDir` against the reference `templateDir`. Refusals are GeneratorInputErrors. */
export function computeDrift(request: DriftRequest, git: GitRunner = GIT_PROGRAM): Promise<DriftReport> {
  return withRepoLimits(request.repoLimits, () => driftWithinLimits(request, git));
}

async function driftWithinLimits(request: DriftRequest, git: GitRunner): Promise<DriftReport> {
  const repoDir = resolve(request.repoDir);
  const environment = findEnvironment(repoDir, request.clusterName);
  const refusal = unrenderable(environment, request.clusterName);
  if (refusal) throw new GeneratorInputError(refusal);
  const { marker } = environment;
  const recorded = marker.reference_commit!;
  const top = referenceTop(resolve(request.templateDir), git);
  const newest = resolveCommit(top, request.to ?? 'HEAD', git);
  if (!inHistoryOf(top, recorded, newest, git))
    throw new GeneratorInputError(
      `the recorded reference commit ${recorded} of cluster ${request.clusterName} is not in the history of ${request.to ?? 'HEAD'} of the reference ${top}; cannot compute drift`,
    );
  const scratch = mkdtempSync(join(tmpdir(), 'gitops-drift-'));
  try {
    const render = await renderAtCommit(top, recorded, marker, scratch, repoLimits(), git);
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
      commits_behind: commitsBetween(top, recorded, newest, git),
      ...difference,
      drifted: difference.changed.length + difference.added.length + difference.missing.length > 0,
      warnings: marker.reference_dirty
        ? [
            `the reference had uncommitted changes when cluster ${request.clusterName} was scaffolded: files may differ because ${recorded.slice(0, 12)} alone does not reproduce them`,
          ]
        : [],
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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
