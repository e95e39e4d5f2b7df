/**
 * An upgrade of one environment: the reference's change from the recorded commit to the new one,
 * replayed on the environment's files (upgrade-plan.ts). Both commits are rendered with the recorded
 * inputs into scratch folders; the new one with the cluster's own certificate or recipients when given,
 * so the credentials it adds are the cluster's. A conflict or a refusal writes nothing at all; else the
 * plan's files are written, the reference's deletions removed and the markers moved to the new commit
 * (inputs unchanged). Committing is left to the user, as after a pass.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RepoLimits } from '#libs/runtime';
import { GeneratorInputError } from '../errors';
import { listFiles } from '../reference';
import { readRepoFile, readRepoFileIfPresent, repoLimits, withRepoLimits } from '../repo-files';
import { insideRepo, OWNER_FILE, writeChangedFile } from '../target';
import {
  openRecordedEnvironment,
  RecordedEnvironment,
  RecordedEnvironmentRequest,
  withScratch,
} from './recorded-environment';
import { commitsBetween, GIT_PROGRAM, GitRunner } from '../reference-git';
import { RenderedEnvironment, renderAtCommit, RenderSealing } from './render-at-commit';
import { FileMerger, GIT_MERGE_FILE } from './three-way';
import { emptyPlan, planUpgrade, UpgradeEdits, UpgradePlan } from './upgrade-plan';

export interface UpgradeRequest extends RecordedEnvironmentRequest, RenderSealing {
  /** Plan only: nothing is written. */
  dryRun?: boolean;
  repoLimits?: RepoLimits;
}

export interface UpgradeReport extends UpgradePlan {
  cluster_name: string;
  folders: string[];
  /** The commit the environment was at. */
  reference_commit: string;
  /** The commit it goes to (--to, the reference's HEAD by default). */
  reference_target: string;
  commits: number;
  /** up-to-date: nothing to do; planned: a dry run without conflicts; conflicted: nothing written. */
  outcome: 'upgraded' | 'up-to-date' | 'planned' | 'conflicted';
  /** Files outside the environment's folders (shared ones) the reference changed: an upgrade never writes them. */
  shared_not_upgraded: string[];
}

/** Where an upgrade writes; the working copy by default, so a test or another transport can stand in. */
export interface TreeWriter {
  write(root: string, path: string, content: Buffer): void;
  remove(root: string, path: string): void;
}

export const WORKING_COPY_WRITER: TreeWriter = {
  write: (root, path, content) => void writeChangedFile(root, path, content),
  remove: (root, path) => rmSync(insideRepo(root, path), { force: true }),
};

export interface UpgradeTools {
  git?: GitRunner;
  merger?: FileMerger;
  writer?: TreeWriter;
}

/** Upgrades (or plans the upgrade of) the environment; refusals are GeneratorInputErrors, conflicts an outcome. */
export function upgradeEnvironment(request: UpgradeRequest, tools: UpgradeTools = {}): Promise<UpgradeReport> {
  return withRepoLimits(request.repoLimits, () => upgradeWithinLimits(request, tools));
}

async function upgradeWithinLimits(request: UpgradeRequest, tools: UpgradeTools): Promise<UpgradeReport> {
  const git = tools.git ?? GIT_PROGRAM;
  const env = openRecordedEnvironment(request, 'upgrade', git);
  if (env.recorded === env.newest) return report(request, env, emptyPlan(), [], 'up-to-date', git);
  return withScratch('gitops-upgrade-', async (scratch) => {
    // Both renders seal alike, so files that name the certificate or recipients (.sops.yaml) differ only where the reference changed them.
    const sealing: RenderSealing = { sealingCertPem: request.sealingCertPem, ageRecipients: request.ageRecipients };
    const render = (name: string, commit: string) =>
      renderAtCommit(env.referenceTop, commit, env.environment.marker, join(scratch, name), repoLimits(), git, sealing);
    const old = await render('old', env.recorded);
    const next = await render('new', env.newest);
    const added = next.folders.filter((f) => !env.environment.folders.includes(f));
    if (added.length > 0)
      throw new GeneratorInputError(
        `the new reference commit renders folders cluster ${request.clusterName} has not (${added.join(', ')}); re-scaffold it with a pass instead`,
      );
    const { plan, edits } = planUpgrade({
      folders: env.environment.folders,
      ours: { root: env.repoDir },
      old: { root: old.repoDir, summary: old.summary },
      new: { root: next.repoDir, summary: next.summary },
      sealedForCluster: sealedForCluster(env, request),
      merger: tools.merger ?? GIT_MERGE_FILE,
    });
    if (plan.refusals.length > 0)
      throw new GeneratorInputError(`refusing to upgrade cluster ${request.clusterName}: ${plan.refusals.join('; ')}`);
    const shared = sharedChanges(old, next, env.environment.folders);
    if (plan.conflicts.length > 0) return report(request, env, plan, shared, 'conflicted', git);
    if (request.dryRun) return report(request, env, plan, shared, 'planned', git);
    apply(env.repoDir, withMarkers(env, edits), tools.writer ?? WORKING_COPY_WRITER);
    return report(request, env, plan, shared, 'upgraded', git);
  });
}

/** Whether the new render's credentials were sealed for the cluster (its certificate or recipients given). */
function sealedForCluster(env: RecordedEnvironment, request: UpgradeRequest): boolean {
  return env.environment.marker.inputs!.secrets_backend === 'sops'
    ? (request.ageRecipients ?? []).length > 0
    : request.sealingCertPem !== undefined;
}

/** The edits with every marker of the environment moved to the new commit (what made it is otherwise the same). */
function withMarkers(env: RecordedEnvironment, edits: UpgradeEdits): UpgradeEdits {
  const writes = new Map(edits.writes);
  for (const folder of env.environment.folders) {
    const path = `${folder}/${OWNER_FILE}`;
    const marker = JSON.parse(readRepoFile(env.repoDir, path, 'utf8'));
    marker.reference_commit = env.newest;
    delete marker.reference_dirty; // the new commit alone made what the upgrade wrote
    writes.set(path, Buffer.from(JSON.stringify(marker, null, 2) + '\n'));
  }
  return { writes, removals: edits.removals };
}

/** Every path is checked (no link on the way, inside the working copy) before the first write. */
function apply(root: string, edits: UpgradeEdits, writer: TreeWriter) {
  for (const path of [...edits.writes.keys(), ...edits.removals]) insideRepo(root, path);
  for (const path of edits.removals) writer.remove(root, path);
  for (const [path, content] of edits.writes) writer.write(root, path, content);
}

/** Files outside the environment's folders that differ between the two renders. */
function sharedChanges(old: RenderedEnvironment, next: RenderedEnvironment, folders: string[]): string[] {
  const outside = (root: string) =>
    listFiles(root).filter((path) => !folders.some((folder) => path.startsWith(`${folder}/`)));
  const paths = new Set([...outside(old.repoDir), ...outside(next.repoDir)]);
  return [...paths].sort().filter((path) => {
    const a = readRepoFileIfPresent(old.repoDir, path);
    const b = readRepoFileIfPresent(next.repoDir, path);
    return !a || !b || !a.equals(b);
  });
}

function report(
  request: UpgradeRequest,
  env: RecordedEnvironment,
  plan: UpgradePlan,
  shared: string[],
  outcome: UpgradeReport['outcome'],
  git: GitRunner,
): UpgradeReport {
  return {
    cluster_name: request.clusterName,
    folders: env.environment.folders,
    reference_commit: env.recorded,
    reference_target: env.newest,
    commits: commitsBetween(env.referenceTop, env.recorded, env.newest, git),
    outcome,
    ...plan,
    shared_not_upgraded: shared,
  };
}
