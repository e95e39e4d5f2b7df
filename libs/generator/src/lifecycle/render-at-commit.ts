/**
 * An environment rendered as its recorded reference commit makes it, with its recorded inputs: the
 * commit's reference folder is read into a scratch folder (the user's working copy, index and refs stay
 * untouched) and a pass runs into an empty scratch repository. Drift compares with it; an upgrade will
 * render the recorded commit and the new one the same way.
 *
 * Credentials cannot be rendered as they were (they are sealed for the cluster's key, and their values
 * are never recorded), and need not be: a render seals for a fixed throwaway certificate or age
 * recipient whose private keys were never kept, with placeholders for the supplied keys recorded.
 * Every file that holds such output is a credential, never compared by value. An upgrade renders the
 * new commit with the cluster's own certificate or recipients (RenderSealing) instead, so the keys and
 * files it adds are sealed for the cluster.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RepoLimits } from '#libs/runtime';
import type { GenerateOptions, GenerateSummary } from '../context';
import { generate } from '../generate';
import { THROWAWAY_AGE_RECIPIENT, THROWAWAY_SEALING_CERT } from '../throwaway-keys';
import type { EnvironmentMarker } from './environment-markers';
import { extractCommitFolder, GIT_PROGRAM, GitRunner } from '../reference-git';

/** What a supplied or registry credential holds in a render (it only ever lands in a credential file). */
const PLACEHOLDER = 'rendered-for-comparison-only';

/** A render: the scratch repository it was written to, the environment's folders there (those it marks) and its pass summary. */
export interface RenderedEnvironment {
  repoDir: string;
  folders: string[];
  summary: GenerateSummary;
}

/** The cluster's own sealing certificate or age recipients, for a render whose new credentials are kept. */
export interface RenderSealing {
  sealingCertPem?: string;
  ageRecipients?: string[];
}

/** The generator's options that reproduce a marker's pass into `repoDir` from the reference at `templateDir`. */
export function optionsFromMarker(
  marker: EnvironmentMarker,
  repoDir: string,
  templateDir: string,
  sealing: RenderSealing = {},
): GenerateOptions {
  const inputs = marker.inputs!;
  const full = inputs.pass === 'full';
  const sops = inputs.secrets_backend === 'sops';
  return {
    repoDir,
    templateDir,
    referenceEnv: marker.reference_env,
    clusterName: marker.cluster_name,
    domain: marker.domain,
    region: marker.region,
    acmeEmail: inputs.acme_email,
    pass: inputs.pass,
    secretsBackend: inputs.secrets_backend,
    sealingScope: inputs.sealing_scope,
    infraLayer: inputs.infra_layer,
    sealingCertPem: full && !sops ? (sealing.sealingCertPem ?? THROWAWAY_SEALING_CERT) : undefined,
    ageRecipients: full && sops ? (sealing.ageRecipients ?? [THROWAWAY_AGE_RECIPIENT]) : undefined,
    registry: inputs.registry_credentials
      ? { server: 'registry.invalid', username: PLACEHOLDER, password: PLACEHOLDER }
      : undefined,
    suppliedCredentials: inputs.supplied_credentials
      ? Object.fromEntries(inputs.supplied_credentials.map((key) => [key, PLACEHOLDER]))
      : undefined,
    clusterVars: inputs.cluster_vars,
    hostMap: inputs.host_map,
    pathMap: inputs.path_map,
    replace: inputs.replace,
    referenceDomain: inputs.reference_domain,
    sourceUrl: inputs.source_url,
    sourceBranch: inputs.source_branch,
    // Validation checks what is written; it changes none of it, and the render is never written anywhere kept.
    validate: false,
    // A render of an infra pass is compared as it is: what a later full pass would meet is not its question.
    rehearseFullPass: false,
  };
}

/**
 * Renders the environment `marker` records from commit `commit` of the reference repository whose top
 * is `referenceTop`, inside `scratch` (an empty folder the caller removes), sealing for `sealing` when
 * given (else for the throwaway certificate or recipient).
 */
export async function renderAtCommit(
  referenceTop: string,
  commit: string,
  marker: EnvironmentMarker,
  scratch: string,
  limits: RepoLimits,
  git: GitRunner = GIT_PROGRAM,
  sealing: RenderSealing = {},
): Promise<RenderedEnvironment> {
  const reference = join(scratch, 'reference');
  const repoDir = join(scratch, 'environment');
  extractCommitFolder(referenceTop, commit, marker.reference_path ?? '', reference, scratch, limits, git);
  mkdirSync(repoDir, { recursive: true });
  const options = { ...optionsFromMarker(marker, repoDir, reference, sealing), repoLimits: limits };
  const { summary } = await generate(options);
  return { repoDir, folders: [summary.gitops_path, ...summary.overlay_paths], summary };
}
