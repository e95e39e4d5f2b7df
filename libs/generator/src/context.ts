import type { RepoLimits } from '#libs/runtime';
import type { SealingCertificate, SealingScope } from '#libs/sealing';
import type { CredentialPlan, CredentialPlanEntry, SuppliedCredentials } from './credential-plan';
import type { RegistryCredentials } from './credentials';
import type { ExternalDnsSettings } from './external-dns';
import type { RemoteKeyMove, RemoteKeyNames } from './external-secrets';
import type { FluxLayerKustomization } from './flux-sync';
import type { IngressHostChange } from './ingress';
import type { Leftover } from './leftovers';

export type Pass = 'infra' | 'full';
export type SecretsBackend = 'sealed-secrets' | 'sops';
/** How the reference makes its environments differ: overlays patched per environment, or one cluster-vars ConfigMap. */
export type EnvironmentModel = 'overlays' | 'cluster-vars' | 'flux-example';

/** The Secret Flux's kustomize-controller decrypts SOPS files with (holding the cluster's age private key). */
export const SOPS_DECRYPTION_SECRET = 'sops-age';

export interface GenerateOptions {
  repoDir: string;
  /** How much of the working copy and the reference is read (MAX_REPO_FILE_BYTES, MAX_REPO_BYTES, MAX_REPO_FILES); default DEFAULT_REPO_LIMITS. */
  repoLimits?: RepoLimits;
  templateDir?: string;
  referenceEnv?: string;
  /** The kubectl that builds and validates (default: `kubectl` on PATH). Missing, a validated pass fails. */
  kubectl?: string;
  clusterName: string;
  domain: string;
  region: string;
  acmeEmail: string;
  /** The key that owns the cluster folder, recorded in its marker and compared with it (absent: not compared, kept as it is). */
  owner?: string;
  pass: Pass;
  /** PEM of the target cluster's sealed-secrets certificate; required for the full pass. */
  sealingCertPem?: string;
  registry?: RegistryCredentials;
  /**
   * Credentials only their issuer can create, by "<namespace>/<secret>/<key>". Required for the full
   * pass; checked in the infra pass too when given, so a missing one stops the run before anything is pushed.
   */
  suppliedCredentials?: SuppliedCredentials;
  rotateCredentials?: boolean;
  sealingScope?: SealingScope;
  /** sealed-secrets (default: sealed for the cluster's certificate) or sops (encrypted for age recipients). */
  secretsBackend?: SecretsBackend;
  /** Public age keys (age1...) of the cluster, for the sops backend. */
  ageRecipients?: string[];
  /** Overlay model: the layer pushed first; every other layer depends on it. */
  infraLayer?: string;
  /** Cluster-vars model: values set for the new cluster over what the generator derives (issuer, sizes, ...). */
  clusterVars?: Record<string, string>;
  /**
   * Flux-example references: reference hosts and the new cluster's name for each, for hosts that are
   * not under the reference domain (or when the reference has none).
   */
  hostMap?: Record<string, string>;
  /**
   * Paths in other repositories (a Kustomization's path in another source, where image automation pushes)
   * and the new cluster's path for each: `./staging` -> `./acme`.
   */
  pathMap?: Record<string, string>;
  /**
   * The last rewrite of the new cluster's own files (never shared ones): every OLD, as literal text, becomes NEW.
   * For what no other flag moves (a CNI's cluster name, an endpoint); the leftover gate suggests each.
   */
  replace?: Record<string, string>;
  /** Refuse the pass while any identifier of the reference is left in the new cluster's files (summary.leftovers). */
  strict?: boolean;
  /** The reference environment's DNS domain, when its external-dns does not tell it. */
  referenceDomain?: string;
  /** The GitRepository URL and branch Flux should sync from (default: the reference's). */
  sourceUrl?: string;
  sourceBranch?: string;
  /**
   * Why the caller cannot tell where Flux will read the new cluster's repository when `sourceUrl` is not given
   * (the CLI: another repository than the reference's, without an origin remote): the pass is refused with it, once
   * every other problem of the pass was looked for, so one run names them in order of what a user fixes first.
   */
  sourceUrlProblem?: string;
  /** Build every written layer with kustomize before anything is written (default true). */
  validate?: boolean;
  /**
   * An infra pass also plans the full pass that follows it, before anything is written (default true): the
   * full pass's problems and leftovers stop the run before its first write. Off for renders that are only compared.
   */
  rehearseFullPass?: boolean;
  now?: Date;
}

export interface SealedObjectSummary {
  file: string;
  namespace: string;
  name: string;
  type: string;
  keys: string[];
  /** The sealing scope (sealed-secrets) or "sops". */
  scope: SealingScope | 'sops';
  /** True when the existing SealedSecret (same certificate) was kept instead of new credentials. */
  reused: boolean;
  /** A secretGenerator's Secret with the SOPS backend: the encrypted files it is generated from (`file` is its kustomization). */
  sources?: string[];
}

/** A reference file left out of the new cluster, and why (never a value). */
export interface OmittedEncrypted {
  /** Repository path of the reference file. */
  path: string;
  reason: string;
}

export interface GenerateSummary {
  cluster_name: string;
  domain: string;
  region: string;
  pass: Pass;
  environment_model: EnvironmentModel;
  gitops_path: string;
  reference_env: string;
  reference_domain: string;
  reference_region: string | null;
  /** Overlay model: the cluster folder's layers. */
  layers: string[];
  /** The Flux Kustomizations this pass gives the cluster, with the order Flux keeps. */
  kustomizations: FluxLayerKustomization[];
  /** Cluster-vars model: the new cluster's variables, and which of them were copied unchanged from the reference. */
  cluster_vars: Record<string, string> | null;
  cluster_vars_inherited: string[];
  paths_written: string[];
  paths_removed: string[];
  shared_paths_copied: string[];
  /** Folders outside the cluster folder that belong to the new cluster (the flux-example model's apps/<name>). */
  overlay_paths: string[];
  /** Files outside the cluster folder that the pass maintains (the repository's .sops.yaml, a .sourceignore carried over). */
  repo_files: string[];
  /** Reference files encrypted for the reference's keys that nothing regenerates: left out, each with why (never a value). */
  omitted_encrypted: OmittedEncrypted[];
  secrets_backend: SecretsBackend;
  age_recipients: string[];
  objects_sealed: SealedObjectSummary[];
  ingress_hosts: IngressHostChange[];
  /** Flux-example model: every host of the reference environment and what it becomes. */
  hosts: Array<{ from: string; to: string }>;
  external_dns: ExternalDnsSettings[];
  sealing_cert_sha256: string | null;
  validated: string[] | null;
  /** Objects checked against the schema of their kind, and the kinds no schema describes (null when not validated). */
  schema_checked: { objects: number; kinds_without_schema: string[] } | null;
  /** Paths into other repositories moved by the path map: the file, object and field, and both paths. */
  paths_moved: Array<{ where: string; from: string; to: string }>;
  /** What becomes of every key of every reference Secret (class per key, never a value), and every ExternalSecret's remote keys. */
  credential_plan: CredentialPlanEntry[];
  /** ExternalSecret remote keys that named the reference environment: moved in the new cluster's files, or listed (shared files). */
  remote_keys: RemoteKeyMove[];
  /** Identifiers of the reference left in the new cluster's own files: file, object, field and the flag that moves each. */
  leftovers: Leftover[];
  /** Leftovers past the scan's bounds (findings, files, bytes): counted, not listed; --strict refuses them too. */
  leftovers_not_listed: number;
  /** The new cluster's files --replace rewrote. */
  replaced: string[];
  /** The reference's commit when it is a git working copy (what the ownership marker records). */
  reference_commit?: string;
  /** The reference's files differed from reference_commit: that commit alone cannot make this output again. */
  reference_dirty?: true;
  warnings: string[];
}

/** A generated credential. Only the library caller sees it (to hand it on sealed); the CLI never prints it. */
export interface GeneratedCredential {
  namespace: string;
  name: string;
  key: string;
  value: string;
}

export interface GenerateResult {
  summary: GenerateSummary;
  credentials: GeneratedCredential[];
  /** An infra pass's rehearsal of the full pass (planned, never written): its leftovers and warnings. */
  rehearsal?: GenerateSummary;
}

/** A shared folder of the reference that the repository lacks: `<root>/<dir>` is copied to `<dir>`. */
export interface SharedCopy {
  /** Repository-relative, the same path as in the reference. */
  dir: string;
  /** The reference's root folder (absolute). */
  root: string;
  /** Files of the folder (relative to it) left out: they hold the reference's ciphertext. */
  omit?: string[];
}

/** What a pass changes in the repository, decided before anything is written there. */
export interface RepoChanges {
  /** Files to write, by repository-relative path: only those whose bytes differ from the repository's. */
  writes: Map<string, Buffer>;
  /** Files to remove (repository-relative): stale files of the folders the pass owns. */
  removals: string[];
  /** Shared folders to copy, applied before the removals and writes. */
  sharedCopies: SharedCopy[];
  /**
   * Writes whose bytes are a reference file's exactly, by repository path: the reference path they
   * copy. A preview names these instead of showing their content (a gotk-components.yaml is 10,000 lines).
   */
  copiedFiles: Map<string, string>;
}

/** A pass computed and checked, nothing written yet: `applyPlan` writes it, a preview compares it with the repository. */
export interface GenerationPlan extends RepoChanges, GenerateResult {}

export type ResolvedOptions = Required<
  Pick<
    GenerateOptions,
    'clusterName' | 'domain' | 'region' | 'acmeEmail' | 'pass' | 'rotateCredentials' | 'sealingScope' | 'infraLayer'
  >
> &
  GenerateOptions & { referenceEnv: string };

/** What every pass of either environment model works with. */
export interface Context {
  opts: ResolvedOptions;
  /** clusters/<cluster-name> */
  clusterDir: string;
  /** The reference repository's root folder (absolute). */
  referenceRoot: string;
  cert?: SealingCertificate;
  summary: GenerateSummary;
  credentials: GeneratedCredential[];
  /** The repository changes planned so far (the pass writes nothing itself). */
  changes: RepoChanges;
  /** The environment's credential plan, made before the first Secret is protected. */
  plan?: CredentialPlan;
  /** Per Secret (namespace/name): whether its protected form already in the target was kept. */
  reusedSecrets: Map<string, boolean>;
  /** What a model learnt of the reference cluster's identifiers, for the leftover gate (one object, shared by every view of the context). */
  referenceFacts: {
    clusterNames?: string[];
    acmeEmails?: string[];
    repositoryUrls?: string[];
    /** The cluster-vars ConfigMap's name: its values move by --var. */
    varsConfigMap?: string;
  };
  /** The reference's names in ExternalSecret remote keys and what they become (set with the credential plan). */
  remoteKeyNames?: RemoteKeyNames;
}

export const usesSops = (ctx: Context) => ctx.opts.secretsBackend === 'sops';
