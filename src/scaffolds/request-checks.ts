import { Inject, Injectable, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { ForgeError, type ForgeKind } from '#libs/delivery/forge-port';
import { forgeEntryFor, type ForgeSettings } from '#libs/delivery/forge-settings';
import { ScaffoldRequestedData, ScaffoldTarget } from '#libs/events';
import {
  CredentialPlanEntry,
  missingSupplied,
  referenceCredentialPlan,
  referenceEnvProblem,
  refreshReferenceFacts,
  SuppliedCredentials,
} from '#libs/generator';
import { isReferenceEnv, normaliseReferenceEnv } from '#libs/validation';
import type { SuppliedCredentialsSource } from '#libs/steps';
import { ApiError } from '../common/api-error';
import { CallerIdentity, requireOperator } from '../common/api-keys';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { SUPPLIED_CREDENTIALS } from '../kubernetes/credentials-source';
import { RunReadModel } from '../projection/run-read-model';
import { CreateRequest, CreateTarget, offersReferenceEnv, parseCreateRequest } from './create-request';
import { checkRepositoryScope, checkSecretScope } from './repository-scope';

/** What the event records of a target: references, fingerprints and public keys only. */
function eventTarget(t: CreateTarget): ScaffoldTarget {
  if (t.kind === 'sealing_cert')
    return {
      kind: 'sealing_cert',
      fingerprint_sha256: t.cert.fingerprintSha256,
      not_after: t.cert.notAfter.toISOString(),
    };
  if (t.kind === 'kubeconfig_secret') return { kind: 'kubeconfig_secret', ...t.ref };
  return { kind: 'age_recipients', recipients: t.recipients };
}

/** What ScaffoldRequested records of a request: the caller as requested_by, and the folder's owner when an admin acts for another key. */
function requestedData(req: CreateRequest, caller: CallerIdentity, folderOwner: string): ScaffoldRequestedData {
  return {
    cluster_name: req.cluster_name,
    domain: req.domain,
    region: req.region,
    acme_email: req.acme_email,
    repo_url: req.repo_url,
    branch: req.branch,
    target: eventTarget(req.target),
    requested_by: caller.name,
    ...(req.cluster_vars ? { cluster_vars: req.cluster_vars } : {}),
    ...(req.credentials_secret ? { credentials_secret: req.credentials_secret } : {}),
    ...(req.flux_url ? { flux_url: req.flux_url } : {}),
    ...(req.host_map ? { host_map: req.host_map } : {}),
    ...(req.path_map ? { path_map: req.path_map } : {}),
    ...(req.reference_domain ? { reference_domain: req.reference_domain } : {}),
    ...(req.reference_env ? { reference_env: req.reference_env } : {}),
    ...(folderOwner !== caller.name ? { cluster_owner: folderOwner } : {}),
    ...(req.delivery ? { delivery: req.delivery } : {}),
    ...(req.replace ? { replace: req.replace } : {}),
    strict: req.strict !== false,
  };
}

/**
 * A merge-request delivery the settings can carry out (422 otherwise, before anything is cloned or appended): a
 * forge configured for the repository, the one the request names if it names one, and auto-merge only where the
 * settings allow it for the repository.
 */
export function checkDelivery(req: CreateRequest, forges: ForgeSettings): void {
  const delivery = req.delivery;
  if (delivery?.mode !== 'merge_request') {
    if (delivery && (delivery.forge || delivery.api_url || delivery.auto_merge))
      throw new ApiError(
        422,
        'unsupported_delivery',
        'delivery: forge, api_url and auto_merge need mode merge_request',
      );
    return;
  }
  let entry;
  try {
    entry = forgeEntryFor(forges, req.repo_url, { forge: delivery.forge as ForgeKind, apiUrl: delivery.api_url });
  } catch (e) {
    if (e instanceof ForgeError) throw new ApiError(422, 'unsupported_delivery', e.message);
    throw e;
  }
  if (!entry)
    throw new ApiError(
      422,
      'unsupported_delivery',
      `delivery.mode merge_request: no forge is configured for ${req.repo_url} (FORGE_DEFAULTS)`,
    );
  if (delivery.auto_merge && !entry.autoMerge)
    throw new ApiError(
      422,
      'unsupported_delivery',
      `delivery.auto_merge: the settings do not allow auto-merge for ${entry.prefix} (FORGE_DEFAULTS auto_merge)`,
    );
}

/**
 * The checks a create and a preview share, so both refuse the same request with the same answer
 * before anything is cloned, appended or pushed.
 */
@Injectable()
export class RequestChecks implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly readModel: RunReadModel,
    /** Management-cluster Secrets with supplied credentials (when the service reaches the management cluster). */
    @Optional() @Inject(SUPPLIED_CREDENTIALS) private readonly credentials?: SuppliedCredentialsSource,
  ) {}

  /**
   * Reads what the offered references hold as the API starts (a tenth of a second of YAML each), so the first
   * create or preview after a start does not hold the event loop, and every answer waiting behind it, while they
   * are read. A reference that cannot be read is the request's or the run's to report, as before.
   */
  async onApplicationBootstrap(): Promise<void> {
    const { templateDir, referenceEnv, kubectl } = this.config.steps;
    for (const env of new Set([referenceEnv, ...this.config.referenceEnvs]))
      if (referenceEnvProblem(templateDir, env) === null)
        await refreshReferenceFacts(templateDir, env, kubectl).catch(() => undefined);
  }

  /** A create or preview body, validated, and refused (403) when it reaches outside the caller's role or scope. */
  async parseInScope(body: unknown, caller: CallerIdentity): Promise<CreateRequest> {
    requireOperator(caller);
    await this.readReference(body);
    const req = parseCreateRequest(body, {
      ...this.config,
      acceptKubeconfigTargets: this.config.reachesManagementCluster,
    });
    checkRepositoryScope(caller, req);
    checkSecretScope(caller, req, this.config.secretNamespaces);
    checkDelivery(req, this.config.forges);
    return req;
  }

  /**
   * What the request's reference holds, read as a run reads it (its hosts from kustomize builds) before the
   * request is checked against it. Only a reference_env that is well formed and the template's is read; any other
   * is the parse's to refuse.
   */
  private async readReference(body: unknown): Promise<void> {
    const given = (body as { reference_env?: unknown } | null)?.reference_env;
    const { templateDir, referenceEnv, kubectl } = this.config.steps;
    const env = normaliseReferenceEnv(given === undefined ? referenceEnv : given);
    if (typeof env !== 'string' || isReferenceEnv(env) !== null || !offersReferenceEnv(this.config, env)) return;
    if (referenceEnvProblem(templateDir, env) !== null) return;
    await refreshReferenceFacts(templateDir, env, kubectl);
  }

  /** What ScaffoldRequested would record of the request, once its cluster folder's owner allows it (see folderOwner). */
  async requestedData(req: CreateRequest, caller: CallerIdentity): Promise<ScaffoldRequestedData> {
    return requestedData(req, caller, await this.folderOwner(req, caller));
  }

  /**
   * The key that owns the request's cluster folder in its repository (the read-model's first run
   * there), asked before anything is cloned or appended: the caller, or none yet (then the caller), or
   * another key: 403 for non-admins, with nothing of the owner's in the answer; admins act for the
   * owner. While PostgreSQL is down nobody is refused here: the folder's marker still refuses a run of
   * another owner before it writes anything, with the same generic reason.
   */
  private async folderOwner(req: CreateRequest, caller: CallerIdentity): Promise<string> {
    const owner = await this.readModel.clusterOwner(req.repo_url, req.cluster_name).catch(() => undefined);
    if (owner !== undefined && owner !== caller.name && caller.role !== 'admin') {
      throw new ApiError(
        403,
        'cluster_owned_elsewhere',
        `cluster ${req.cluster_name} in this repository belongs to another key`,
      );
    }
    return owner ?? caller.name;
  }

  /** The reference's credential plan (classes only; empty when the generator cannot read the reference: the run reports why). */
  referenceCredentials(referenceEnv: string | undefined): CredentialPlanEntry[] {
    return referenceCredentialPlan(this.config.steps.templateDir, referenceEnv ?? this.config.steps.referenceEnv);
  }

  /**
   * The registry pull secrets of the reference are built from REGISTRY_* settings. With the local
   * executor the steps run with this process's settings, so a missing one is refused before anything
   * is appended or pushed (a Job's settings come from its own Secret, which the service cannot see).
   */
  checkRegistry(referenceEnv?: string): void {
    if (this.config.executor !== 'local' || this.config.steps.registry) return;
    const pullSecrets = [
      ...new Set(
        this.referenceCredentials(referenceEnv)
          .filter((e) => e.class === 'registry')
          .map((e) => `${e.namespace}/${e.name}`),
      ),
    ];
    if (pullSecrets.length === 0) return;
    throw new ApiError(
      422,
      'registry_missing',
      `the reference's registry pull secrets (${pullSecrets.join(', ')}) are built from REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD, which this service does not have`,
    );
  }

  /**
   * Credentials only their issuer can create, checked before anything is appended: the reference's
   * supplied keys need a credentials_secret, and when that Secret can be read now it must hold them
   * all (422 naming the missing keys, never a value). A Secret that is missing, not labelled as an
   * input or forbidden by RBAC gets the same answer as any other it cannot read (accepted; the run
   * reads it again before its first push and fails there with one message for all three), so the
   * answer does not tell a caller which Secrets exist.
   */
  async checkSupplied(
    ref: { namespace: string; name: string } | undefined,
    referenceEnv?: string,
  ): Promise<SuppliedCredentials | undefined> {
    const plan = this.referenceCredentials(referenceEnv);
    const needed = missingSupplied(plan, {});
    if (needed.length === 0) return undefined;
    if (!this.credentials) {
      throw new ApiError(
        422,
        'credentials_missing',
        `the reference needs credentials only their issuer can create (${needed.join(', ')}): they come from a credentials_secret, which needs access to the management cluster`,
      );
    }
    if (!ref)
      throw new ApiError(
        422,
        'credentials_missing',
        `credentials_secret: the reference needs credentials only their issuer can create (${needed.join(', ')}); name the Secret holding them`,
      );
    const supplied = await this.credentials.read(ref).catch(() => undefined);
    if (!supplied) return undefined;
    const missing = missingSupplied(plan, supplied);
    if (missing.length > 0)
      throw new ApiError(
        422,
        'credentials_missing',
        `credentials_secret: Secret ${ref.namespace}/${ref.name} lacks ${missing.join(', ')}`,
      );
    return supplied;
  }
}
