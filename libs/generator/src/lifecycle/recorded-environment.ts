/**
 * An environment as the lifecycle commands (drift, upgrade) start from it: its folders and marker in
 * the repository, the reference's working copy, the commit the marker records and the commit the
 * command goes to (--to, default HEAD), each refused (a GeneratorInputError, exit 2) when it cannot be
 * rendered again: no marker, a marker from before the commit was recorded, a commit the reference lacks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GeneratorInputError } from '../errors';
import { Environment, findEnvironment } from './environment-markers';
import { GitRunner, inHistoryOf, resolveCommit } from '../reference-git';

export interface RecordedEnvironmentRequest {
  /** The environment repository's working copy. */
  repoDir: string;
  /** A git working copy of the reference (any folder of it). */
  templateDir: string;
  clusterName: string;
  /** The reference revision the command goes to (default HEAD). */
  to?: string;
}

export interface RecordedEnvironment {
  /** The repository's working copy, resolved. */
  repoDir: string;
  environment: Environment;
  /** The top of the reference's working copy. */
  referenceTop: string;
  /** The commit the marker records. */
  recorded: string;
  /** The commit --to names (the reference's HEAD by default). */
  newest: string;
}

/** Why an environment's marker cannot be rendered again, or null; `purpose` ends the sentence ("compute drift"). */
function unrenderable(environment: Environment, clusterName: string, purpose: string): string | null {
  const { marker } = environment;
  if (marker.marker_version === undefined || !marker.inputs)
    return `cluster ${clusterName} was scaffolded before markers recorded the reference commit; cannot ${purpose}`;
  if (!marker.reference_commit)
    return `cluster ${clusterName} was scaffolded from a reference that was no git working copy (its marker records no reference commit); cannot ${purpose}`;
  if (marker.in_reference_repository)
    return `cluster ${clusterName} was written into the reference's own working copy; cannot ${purpose} of an environment inside the reference`;
  return null;
}

/** The top of the reference's working copy, refused when `dir` is none. */
function referenceTopOf(dir: string, git: GitRunner): string {
  try {
    return git.run(dir, ['rev-parse', '--show-toplevel']).trim();
  } catch {
    throw new GeneratorInputError(`--template ${dir} is not a git working copy of the reference`);
  }
}

/** The environment of the request, its recorded commit and the commit it goes to; refusals say they stop `purpose`. */
export function openRecordedEnvironment(
  request: RecordedEnvironmentRequest,
  purpose: string,
  git: GitRunner,
): RecordedEnvironment {
  const repoDir = resolve(request.repoDir);
  const environment = findEnvironment(repoDir, request.clusterName);
  const refusal = unrenderable(environment, request.clusterName, purpose);
  if (refusal) throw new GeneratorInputError(refusal);
  const recorded = environment.marker.reference_commit!;
  const top = referenceTopOf(resolve(request.templateDir), git);
  const newest = resolveCommit(top, request.to ?? 'HEAD', git);
  if (!inHistoryOf(top, recorded, newest, git))
    throw new GeneratorInputError(
      `the recorded reference commit ${recorded} of cluster ${request.clusterName} is not in the history of ${request.to ?? 'HEAD'} of the reference ${top}; cannot ${purpose}`,
    );
  return { repoDir, environment, referenceTop: top, recorded, newest };
}

/** Runs `work` with a new scratch folder, removed afterwards whatever happens (renders hold credentials). */
export async function withScratch<T>(prefix: string, work: (scratch: string) => Promise<T>): Promise<T> {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await work(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
