/**
 * The generator's options for a pass of a request: what both passes and the preview generate with. Shared pass
 * code (libs/steps/src/pass/): the pass steps' folders import it, it imports none of them.
 */
import type { ScaffoldRequestedData } from '#libs/events';
import type { GenerateOptions, Pass, SuppliedCredentials } from '#libs/generator';
import { fluxUrlOf, originUrl, sameRepository } from '#libs/git';
import type { StepSettings } from '../handler/settings';

/** The generator's options for one pass of a request, in a working copy: shared by the steps and the preview. */
export function passOptions(
  req: ScaffoldRequestedData,
  settings: StepSettings,
  repoDir: string,
  pass: Pass,
  sealingCertPem?: string,
  suppliedCredentials?: SuppliedCredentials,
): GenerateOptions {
  return {
    ...passScope(req, settings),
    suppliedCredentials,
    repoDir,
    repoLimits: settings.repoLimits,
    kubectl: settings.kubectl,
    domain: req.domain,
    region: req.region,
    acmeEmail: req.acme_email,
    owner: folderOwner(req),
    pass,
    sealingCertPem,
    ...secretsBackendOf(req),
    clusterVars: req.cluster_vars,
    hostMap: req.host_map,
    referenceDomain: req.reference_domain,
    replace: req.replace,
    // The generator only lists leftovers here: a strict request's refusal is the step's (gateLeftovers), in a request's words.
    strict: false,
    registry: settings.registry,
    sourceUrl: fluxSourceUrl(req, settings),
    sourceBranch: req.branch,
  };
}

/** What decides the folders of the target repository a pass of the request reads and writes (passOptions' own values). */
export const passScope = (req: ScaffoldRequestedData, settings: StepSettings) => ({
  templateDir: settings.templateDir,
  referenceEnv: req.reference_env ?? settings.referenceEnv,
  clusterName: req.cluster_name,
  pathMap: req.path_map,
});

/** The key that owns the run's cluster folder: requested_by, unless the service recorded the owner an admin acts for. */
export const folderOwner = (req: Pick<ScaffoldRequestedData, 'requested_by' | 'cluster_owner'>) =>
  req.cluster_owner ?? req.requested_by;

/**
 * Where the new cluster's Flux fetches from: the request's flux_url; the reference's own URL (as Flux
 * already knows it) when the target is the reference's repository; else the target repository.
 */
function fluxSourceUrl(
  req: Pick<ScaffoldRequestedData, 'repo_url' | 'flux_url'>,
  settings: StepSettings,
): string | undefined {
  if (req.flux_url) return req.flux_url;
  const reference = settings.templateDir ? originUrl(settings.templateDir) : undefined;
  return reference && sameRepository(reference, req.repo_url) ? undefined : fluxUrlOf(req.repo_url);
}

/** SOPS runs encrypt for the request's age recipients; every other run seals for the cluster's certificate. */
function secretsBackendOf(req: Pick<ScaffoldRequestedData, 'target'>): {
  secretsBackend: 'sealed-secrets' | 'sops';
  ageRecipients?: string[];
} {
  return req.target.kind === 'age_recipients'
    ? { secretsBackend: 'sops', ageRecipients: req.target.recipients }
    : { secretsBackend: 'sealed-secrets' };
}
