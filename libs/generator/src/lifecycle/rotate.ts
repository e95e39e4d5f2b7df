/**
 * Rotating an environment's credentials for its cluster's current sealing certificate (after the sealed-secrets
 * controller renewed its key, or a new controller): the environment's recorded reference commit is rendered again
 * with its recorded inputs, new values and the new certificate, and every credential file that render seals replaces
 * the environment's. Nothing else of the environment changes. The values inside the environment's SealedSecrets
 * can be read only by the cluster, so they cannot be kept: a rotation generates new ones (`newValues`, the
 * generated class; derived values follow them) and takes the supplied and registry credentials again from the user.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { RepoLimits } from '#libs/runtime';
import type { SuppliedCredentials } from '../credential-plan';
import type { RegistryCredentials } from '../credentials';
import { GeneratorInputError } from '../errors';
import { generate } from '../generate';
import type { GenerationInputs } from '../provenance';
import { GIT_PROGRAM, GitRunner, extractCommitFolder } from '../reference-git';
import { readRepoFile, repoEntry, repoLimits, withRepoLimits } from '../repo-files';
import { listFiles } from '../reference';
import { parseDocuments } from '../yaml-docs';
import { openRecordedEnvironment, withScratch } from './recorded-environment';
import { optionsFromMarker } from './render-at-commit';

export interface RotateRequest {
  repoDir: string;
  templateDir: string;
  clusterName: string;
  /** The cluster's current sealed-secrets certificate (PEM). */
  sealingCertPem: string;
  /** Generate new values: the only way, since the environment's sealed values are the cluster's to read. */
  newValues: boolean;
  suppliedCredentials?: SuppliedCredentials;
  registry?: RegistryCredentials;
  dryRun?: boolean;
  repoLimits?: RepoLimits;
  git?: GitRunner;
}

export interface RotateReport {
  cluster_name: string;
  folders: string[];
  /** The commit the credentials were rendered from (the environment's recorded one: a rotation upgrades nothing). */
  reference_commit: string;
  /** The certificate they are sealed for now (SHA-256 of its DER). */
  sealing_cert_sha256: string;
  /** Credential files replaced (or, on a dry run, that would be). */
  files_replaced: string[];
  /**
   * SealedSecrets of the environment's folders the render does not make (sealed by hand, or by an older reference):
   * still sealed for the old certificate, listed for the user to seal again.
   */
  not_rotated: string[];
  /** Objects sealed anew. */
  objects_sealed: number;
  dry_run: boolean;
}

export function rotateCredentials(request: RotateRequest): Promise<RotateReport> {
  return withRepoLimits(request.repoLimits, () => rotateWithinLimits(request));
}

async function rotateWithinLimits(request: RotateRequest): Promise<RotateReport> {
  const git = request.git ?? GIT_PROGRAM;
  const { repoDir, environment, referenceTop, recorded } = openRecordedEnvironment(
    request,
    'rotate its credentials',
    git,
  );
  const { marker } = environment;
  const inputs = marker.inputs!;
  refuseUnrotatable(request, inputs);
  return withScratch('gitops-rotate-', async (scratch) => {
    const reference = join(scratch, 'reference');
    const rendered = join(scratch, 'environment');
    extractCommitFolder(referenceTop, recorded, marker.reference_path ?? '', reference, scratch, repoLimits(), git);
    mkdirSync(rendered, { recursive: true });
    const { summary } = await generate({
      ...optionsFromMarker(marker, rendered, reference, { sealingCertPem: request.sealingCertPem }),
      registry: request.registry,
      suppliedCredentials: request.suppliedCredentials,
      rotateCredentials: true,
      repoLimits: repoLimits(),
    });
    const files = [...new Set(summary.objects_sealed.map((o) => o.file))].sort();
    for (const file of files) refuseDestination(repoDir, file, environment.folders);
    if (!request.dryRun) for (const file of files) replace(join(rendered, file), join(repoDir, file));
    return {
      cluster_name: request.clusterName,
      folders: environment.folders,
      reference_commit: recorded,
      sealing_cert_sha256: summary.sealing_cert_sha256 ?? '',
      files_replaced: files,
      not_rotated: sealedFilesOf(repoDir, environment.folders).filter((file) => !files.includes(file)),
      objects_sealed: summary.objects_sealed.length,
      dry_run: request.dryRun === true,
    };
  });
}

/** The YAML files of the environment's folders that hold a SealedSecret (repository-relative, sorted). */
function sealedFilesOf(repoDir: string, folders: string[]): string[] {
  return folders
    .flatMap((folder) => listFiles(join(repoDir, folder)).map((file) => posix.join(folder, file)))
    .filter((file) => /\.ya?ml$/.test(file))
    .filter((file) =>
      parseDocuments(readRepoFile(repoDir, file, 'utf8'), file).some((doc) => doc.get('kind') === 'SealedSecret'),
    )
    .sort();
}

/** What a rotation cannot do, refused before anything is rendered or written. */
function refuseUnrotatable(request: RotateRequest, inputs: GenerationInputs) {
  if (inputs.pass !== 'full')
    throw new GeneratorInputError(
      `cluster ${request.clusterName} has had only its infra pass: it has no credentials yet`,
    );
  if (inputs.secrets_backend === 'sops')
    throw new GeneratorInputError(
      `cluster ${request.clusterName} encrypts its Secrets with SOPS: rotating them (new recipients, a new data key) needs the files' data key and is not supported yet; nothing written`,
    );
  if (!request.newValues)
    throw new GeneratorInputError(
      `the values in cluster ${request.clusterName}'s SealedSecrets can be read only by the cluster: give --new-values to seal new ones for the new certificate (supplied credentials are asked again with --credentials); nothing written`,
    );
  const missing = (inputs.supplied_credentials ?? []).filter((key) => request.suppliedCredentials?.[key] === undefined);
  if (missing.length > 0)
    throw new GeneratorInputError(
      `the environment's supplied credentials must be given again (--credentials): missing ${missing.join(', ')}; nothing written`,
    );
  if (inputs.registry_credentials && !request.registry)
    throw new GeneratorInputError(
      'the environment has registry pull credentials: give them again (REGISTRY_* or --registry-auth); nothing written',
    );
}

/**
 * Checked for every file before any is written: a destination inside the environment's folders, no link on its way
 * (a link inside the working copy would carry the write into another environment's file), a file or nothing there.
 */
function refuseDestination(repoDir: string, file: string, folders: string[]) {
  if (!folders.some((f) => file.startsWith(`${f}/`)))
    throw new GeneratorInputError(
      `${file} is outside the environment's folders (${folders.join(', ')}): was a folder moved? nothing written`,
    );
  const parts = file.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const entry = repoEntry(repoDir, parts.slice(0, i).join('/'));
    if (entry === undefined) return;
    if (entry === 'link' || (i === parts.length && entry !== 'file') || (i < parts.length && entry !== 'folder'))
      throw new GeneratorInputError(
        `${parts.slice(0, i).join('/')} is ${entry === 'link' ? 'a symbolic link' : `a ${entry}`} where ${file} is written; nothing written`,
      );
  }
}

/** A rendered credential file over the environment's (its folder made when the environment lacked it). */
function replace(from: string, to: string) {
  if (!existsSync(dirname(to))) mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}
