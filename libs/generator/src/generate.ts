import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isAgeRecipient } from '#libs/sealing/sops';
import { parseSealingCertificate, SealingCertificate, SealingScope, CertificateError } from '#libs/sealing';
import { isClusterName, isDomain, isEmail, isHostName, isReferenceEnv, isRegion } from '#libs/validation';
import { CredentialPlan, CredentialPlanEntry } from './credential-plan';
import { referenceSecretShapes } from './secret-examples';
import {
  generateFromClusterVars,
  givenVarProblem,
  KnownVariables,
  knownVariables,
  loadClusterVarsReference,
  VarProblem,
} from './cluster-vars-model';
import {
  Context,
  GenerateOptions,
  GenerateResult,
  GenerateSummary,
  GenerationPlan,
  RepoChanges,
  ResolvedOptions,
  usesSops,
} from './context';
import { settleProvenance, startProvenanceRead } from './provenance';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { generateFromOverlays } from './overlay-model';
import { hostsFluxApplies } from './applied-hosts';
import { checkPathMap, checkPathMapUsed } from './foreign-paths';
import { applyReplacements, checkReplacements, leftoverGate } from './leftover-gate';
import { checkReferenceExists, loadReference } from './reference';
import { checkReadableLayout } from './readable-layout';
import { throwIfPassAborted } from './pass-signal';
import { checkWorkingCopy, withRepoLimits } from './repo-files';
import {
  applyPlan,
  checkOwnership,
  insideRepo,
  keepRecordWhenNothingElseChanges,
  ownedBy,
  ownerOf,
  planOwnerMarker,
  planSopsRules,
  planSourceIgnore,
} from './target';
import {
  canonicalReferenceEnv,
  isFolderForm,
  isSeparateRepository,
  newClusterDir,
  referenceEnvDir,
} from './environment-folder';
import { generateFromFluxExample, referenceHostOccurrences } from './flux-example-model';
import { discoverReferenceDns } from './external-dns';
import { HostMapping, HostOccurrence } from './hosts';
import { loadFluxExampleReference } from './flux-example-reference';
import { planWithRehearsal } from './rehearsal';

export * from './context';

/** The reference template shipped with the project (overlay model). */
export const SHIPPED_TEMPLATE = join(projectRoot(__dirname), 'templates/platform');
/** The second shipped reference: a phased platform whose clusters differ only by cluster-vars. */
export const SHIPPED_PHASED_TEMPLATE = join(projectRoot(__dirname), 'templates/phased-platform');
/** A reference shaped like a platform that commits its Secrets SOPS-encrypted (environment `dev`). */
export const SHIPPED_SOPS_TEMPLATE = join(projectRoot(__dirname), 'templates/sops-platform');

/** The folder holding package.json: the same from the TypeScript sources and from dist/. */
function projectRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Host maps are read by the flux-example model; elsewhere they would be silently ignored. A reference domain is read by every model. */
function checkHostOptions(opts: GenerateOptions, fluxExample: boolean) {
  if (opts.referenceDomain !== undefined && isDomain(opts.referenceDomain))
    throw new GeneratorInputError(`--reference-domain ${isDomain(opts.referenceDomain)}`);
  for (const [from, to] of Object.entries(opts.hostMap ?? {})) {
    const problem = isHostName(from) ?? isHostName(to);
    if (problem) throw new GeneratorInputError(`--host-map ${from}=${to}: ${problem}`);
  }
  if (fluxExample) return;
  if (Object.keys(opts.hostMap ?? {}).length > 0)
    throw new GeneratorInputError(
      "--host-map is read for references in the layout of Flux's example repository; this reference moves hosts by its domain",
    );
}

function checkInputs(opts: GenerateOptions) {
  const fields: Array<[string, unknown, (v: unknown) => string | null]> = [
    ['--cluster-name', opts.clusterName, isClusterName],
    ['--domain', opts.domain, isDomain],
    ['--region', opts.region, isRegion],
    ['--acme-email', opts.acmeEmail, isEmail],
    ['--reference-env', opts.referenceEnv ?? 'development', isReferenceEnv],
  ];
  // Every bad value at once: a user fixing them one run at a time would need as many runs as mistakes.
  const problems = fields.flatMap(([flag, value, check]) => {
    const problem = check(value);
    return problem ? [`${flag} ${problem}`] : [];
  });
  if (problems.length > 0) throw new GeneratorInputError(problems.join('; '));
  if (!existsSync(opts.repoDir) || !statSync(opts.repoDir).isDirectory())
    throw new GeneratorInputError(`--repo ${opts.repoDir} is not a folder`);
  checkPathMap(opts.pathMap ?? {});
  checkReplacements(opts.replace ?? {});
}

/** What the full pass protects Secrets with: the sealing certificate, or (sops) checked age recipients. */
function protectionKey(opts: ResolvedOptions): SealingCertificate | undefined {
  if (opts.pass !== 'full') return undefined;
  if (opts.secretsBackend === 'sops') {
    const recipients = opts.ageRecipients ?? [];
    if (recipients.length === 0)
      throw new GeneratorInputError("the sops backend needs the cluster's age public key (--age-recipient age1...)");
    const bad = recipients.find((r) => !isAgeRecipient(r));
    if (bad !== undefined)
      throw new GeneratorInputError(
        `--age-recipient must be an age public key (age1...), not ${JSON.stringify(String(bad).slice(0, 12))}`,
      );
    return undefined;
  }
  if (!opts.sealingCertPem)
    throw new GeneratorInputError("the full pass needs the target cluster's sealing certificate (--sealing-cert FILE)");
  try {
    return parseSealingCertificate(opts.sealingCertPem, opts.now);
  } catch (e) {
    if (e instanceof CertificateError) throw new GeneratorInputError(`--sealing-cert: ${e.message}`);
    throw e;
  }
}

function emptySummary(
  opts: ResolvedOptions,
  clusterDir: string,
  cert: SealingCertificate | undefined,
): GenerateSummary {
  return {
    cluster_name: opts.clusterName,
    domain: opts.domain,
    region: opts.region,
    pass: opts.pass,
    environment_model: 'overlays',
    gitops_path: clusterDir,
    reference_env: opts.referenceEnv,
    reference_domain: '',
    reference_region: null,
    layers: [],
    kustomizations: [],
    cluster_vars: null,
    cluster_vars_inherited: [],
    paths_written: [],
    paths_removed: [],
    shared_paths_copied: [],
    overlay_paths: [],
    repo_files: [],
    omitted_encrypted: [],
    secrets_backend: opts.secretsBackend ?? 'sealed-secrets',
    age_recipients: opts.ageRecipients ?? [],
    objects_sealed: [],
    ingress_hosts: [],
    hosts: [],
    external_dns: [],
    sealing_cert_sha256: cert?.fingerprintSha256 ?? null,
    validated: opts.validate === false ? null : [],
    schema_checked: null,
    paths_moved: [],
    credential_plan: [],
    remote_keys: [],
    leftovers: [],
    leftovers_not_listed: 0,
    replaced: [],
    warnings: [],
  };
}

/** How long what a reference knows is reused for request checks before the reference is read again. */
const REFERENCE_FACTS_TTL_MS = 60_000;

/** What request checks need to know of a reference: its cluster variables, or its hosts (Flux example layout). */
interface ReferenceFacts {
  variables: KnownVariables | undefined;
  hosts: { occurrences: HostOccurrence[]; domain: string | undefined } | undefined;
}

/** What the cache holds of a reference: its facts (undefined when unreadable) and its credential plan (empty when unreadable). */
interface KnownReference {
  readAt: number;
  /** When the facts were read with kustomize builds (refreshReferenceFacts); undefined for a read of the files alone. */
  builtAt?: number;
  facts: ReferenceFacts | undefined;
  credentialPlan: CredentialPlanEntry[];
}

const knownReferences = new Map<string, KnownReference>();

/**
 * What a reference knows, read at most once a minute per process (the one cache of it), so a request
 * costs no reference walk. A reference the generator cannot read leaves its facts undefined and its
 * credential plan empty: that is the run's to report, with the generator's reason, not the request's.
 */
function knownReference(templateDir: string | undefined, givenEnv: string): KnownReference {
  const { root, referenceEnv, key } = referenceKey(templateDir, givenEnv);
  const cached = knownReferences.get(key);
  if (cached && Date.now() - cached.readAt <= REFERENCE_FACTS_TTL_MS) return cached;
  return remember(
    key,
    root,
    referenceEnv,
    readable(() => readReferenceFacts(root, referenceEnv)),
  );
}

function referenceKey(templateDir: string | undefined, givenEnv: string) {
  const referenceEnv = canonicalReferenceEnv(givenEnv);
  const root = resolve(templateDir ?? SHIPPED_TEMPLATE);
  return { root, referenceEnv, key: `${root}\0${referenceEnv}` };
}

/** A reference's facts, or undefined when the generator cannot read it (the run reports that, not the request). */
function readable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    if (e instanceof GeneratorInputError || e instanceof GeneratorValidationError) return undefined;
    throw e;
  }
}

function remember(key: string, root: string, referenceEnv: string, facts: ReferenceFacts | undefined): KnownReference {
  const known = { readAt: Date.now(), facts, credentialPlan: readableCredentialPlan(root, referenceEnv) };
  knownReferences.set(key, known);
  return known;
}

const refreshing = new Map<string, Promise<void>>();

/**
 * Reads what a reference knows as a run would, kustomize builds included (its hosts are those Flux applies: see
 * hostsFluxApplies), into the cache the request checks read; call it before them. Once a minute at most per
 * reference, and one read at a time: concurrent requests wait for the same one.
 */
export async function refreshReferenceFacts(
  templateDir: string | undefined,
  givenEnv: string,
  kubectl?: string,
): Promise<void> {
  const { root, referenceEnv, key } = referenceKey(templateDir, givenEnv);
  const cached = knownReferences.get(key);
  if (cached?.builtAt !== undefined && Date.now() - cached.builtAt <= REFERENCE_FACTS_TTL_MS) return;
  const running =
    refreshing.get(key) ??
    (async () => {
      const example = readable(() =>
        loadClusterVarsReference(root, referenceEnv) ? undefined : loadFluxExampleReference(root, referenceEnv),
      );
      const applied = example && (await hostsFluxApplies(example, kubectl));
      const known = remember(
        key,
        root,
        referenceEnv,
        readable(() => readReferenceFacts(root, referenceEnv, applied)),
      );
      known.builtAt = known.readAt;
    })().finally(() => refreshing.delete(key));
  refreshing.set(key, running);
  await running;
}

const referenceFacts = (templateDir: string | undefined, referenceEnv: string) =>
  knownReference(templateDir, referenceEnv).facts;

function readReferenceFacts(root: string, referenceEnv: string, appliedHosts?: Set<string>): ReferenceFacts {
  const vars = loadClusterVarsReference(root, referenceEnv);
  const example = vars ? undefined : loadFluxExampleReference(root, referenceEnv);
  return {
    variables: vars && knownVariables(vars),
    hosts: example && {
      occurrences: referenceHostOccurrences(example, appliedHosts),
      domain: discoverReferenceDns(example.kustomizations.flatMap((k) => k.objects)).domain,
    },
  };
}

/**
 * Checks a reference environment a request names before any run starts: null when the service's
 * template has it (a name under clusters/ or a folder), else why not.
 */
export function referenceEnvProblem(templateDir: string | undefined, referenceEnv: string): string | null {
  const root = resolve(templateDir ?? SHIPPED_TEMPLATE);
  try {
    checkReferenceExists(root, canonicalReferenceEnv(referenceEnv));
    return null;
  } catch (e) {
    // The service's folders are no business of the caller's.
    if (e instanceof GeneratorInputError) return e.message.replaceAll(root, "the service's template");
    throw e;
  }
}

/**
 * Checks cluster-vars values for a reference before any run starts (the service validates
 * requests with it): null when they can be used, else the first problem.
 */
export function clusterVarsProblem(
  templateDir: string | undefined,
  referenceEnv: string,
  vars: Record<string, unknown>,
): VarProblem | null {
  const facts = Object.keys(vars).length === 0 ? undefined : referenceFacts(templateDir, referenceEnv);
  return facts ? givenVarProblem(facts.variables, vars) : null;
}

/**
 * Checks a request's host map and reference domain against the service's reference before any run
 * starts: null when every host of the reference gets a place in the new cluster, else the field and
 * why (every unmapped host, where it is).
 */
export function hostMapProblem(
  templateDir: string | undefined,
  referenceEnv: string,
  given: { domain: string; hostMap?: Record<string, string>; referenceDomain?: string },
): { field: string; problem: string } | null {
  const facts = referenceFacts(templateDir, referenceEnv);
  if (!facts) return null;
  const hosts = facts.hosts;
  const mapped = Object.keys(given.hostMap ?? {}).length > 0;
  if (!hosts) {
    if (mapped)
      return {
        field: 'host_map',
        problem:
          "the service's reference moves hosts by its domain (host_map is for references in the layout of Flux's example repository)",
      };
    return null;
  }
  try {
    new HostMapping(given.domain, given.referenceDomain ?? hosts.domain, given.hostMap ?? {}).checkCovers(
      hosts.occurrences,
    );
    return null;
  } catch (e) {
    if (e instanceof GeneratorInputError)
      return {
        field: 'host_map',
        problem: e.message
          .replace(/--host-map OLD=NEW \(host_map in a request\)/, 'host_map {"OLD": "NEW"}')
          .replace(/^--host-map /, ''),
      };
    throw e;
  }
}

/**
 * The credential plan of a reference environment without running a pass (classes only), from the
 * cache of reference facts: the service checks at request time that the supplied credentials it was
 * pointed at cover every supplied key. Empty when the generator cannot read the reference.
 */
export function referenceCredentialPlan(templateDir: string | undefined, referenceEnv: string): CredentialPlanEntry[] {
  return knownReference(templateDir, referenceEnv).credentialPlan;
}

function readableCredentialPlan(root: string, referenceEnv: string): CredentialPlanEntry[] {
  try {
    return credentialPlanOf(root, referenceEnv);
  } catch {
    return []; // a reference the generator cannot read is the run's to report, with the generator's reason
  }
}

function credentialPlanOf(root: string, referenceEnv: string): CredentialPlanEntry[] {
  const vars = loadClusterVarsReference(root, referenceEnv);
  const example = vars ? undefined : loadFluxExampleReference(root, referenceEnv);
  const objects = vars
    ? [...vars.applied, ...vars.kustomizations.flatMap((k) => k.objects)]
    : example
      ? [...example.envObjects, ...example.kustomizations.flatMap((k) => k.objects)]
      : loadReference(root, referenceEnv).layers.flatMap((l) => l.objects);
  return CredentialPlan.build(referenceSecretShapes(root, objects), { requireSupplied: false }).entries;
}

/** The new cluster's folder: beside the reference environment, or at its own path in another repository. */
function clusterDirFor(opts: ResolvedOptions, root: string): string {
  const envDir = referenceEnvDir(root, opts.referenceEnv);
  const holdsEnvDir = existsSync(insideRepo(opts.repoDir, envDir));
  return newClusterDir(envDir, opts.clusterName, {
    separate: isSeparateRepository(opts.repoDir, root),
    holdsEnvDir,
    ownedHere: holdsEnvDir && ownedBy(opts.repoDir, envDir, ownerOf(opts)),
  });
}

/**
 * An environment outside clusters/ is read in the cluster-vars layout only (a settings ConfigMap its
 * Flux Kustomizations substitute, home-ops' cluster-settings); the overlay and Flux example layouts
 * keep their environments under clusters/.
 */
function refuseFolderFormOutsideClusterVars(root: string, referenceEnv: string) {
  const envDir = referenceEnvDir(root, referenceEnv);
  if (!isFolderForm(envDir)) return;
  throw new GeneratorInputError(
    `reference environment ${envDir}/ lies outside clusters/ and no Flux Kustomization of it substitutes a settings ConfigMap it defines (postBuild.substituteFrom, such as cluster-settings): an environment folder elsewhere is read in the cluster-vars layout of docs/generator.md ("Environment models")`,
  );
}

/**
 * One pass for a new cluster, planned: the files it would write and remove and the shared folders
 * it would copy, checked (kustomize builds, schemas) in a transient staging beside their places, and
 * nothing written to the repository. The reference decides the environment model: a reference whose
 * Flux Kustomizations substitute a cluster-vars ConfigMap gets a new cluster-vars; otherwise the
 * environment's overlay layers are copied with the new domain patched in. An infra pass rehearses the full pass
 * after it (rehearsal.ts): both passes' problems stop the run before its first write.
 */
export function planGeneration(options: GenerateOptions): Promise<GenerationPlan> {
  return withRepoLimits(options.repoLimits, () => planWithRehearsal(planWithinLimits, options));
}

async function planWithinLimits(options: GenerateOptions): Promise<GenerationPlan> {
  checkInputs(options);
  // Before anything of it is read: a pass reads the tenant's files, and a preview and a run refuse the same links.
  checkWorkingCopy(options.repoDir);
  const opts: ResolvedOptions = {
    ...options,
    referenceEnv: canonicalReferenceEnv(options.referenceEnv ?? 'development'),
    rotateCredentials: options.rotateCredentials ?? false,
    sealingScope: options.sealingScope ?? ('strict' as SealingScope),
    infraLayer: options.infraLayer ?? 'infrastructure',
  };
  const root = resolve(opts.templateDir ?? SHIPPED_TEMPLATE);
  checkReadableLayout(root, opts.referenceEnv);
  checkReferenceExists(root, opts.referenceEnv);
  const clusterDir = clusterDirFor(opts, root);
  checkOwnership(opts.repoDir, clusterDir, ownerOf(opts));
  const cert = protectionKey(opts);
  const changes: RepoChanges = { writes: new Map(), removals: [], sharedCopies: [], copiedFiles: new Map() };
  const ctx: Context = {
    opts,
    clusterDir,
    referenceRoot: root,
    cert,
    credentials: [],
    changes,
    summary: emptySummary(opts, clusterDir, cert),
    reusedSecrets: new Map(),
    referenceFacts: {},
  };
  startProvenanceRead(ctx);

  const varsReference = loadClusterVarsReference(root, opts.referenceEnv);
  const problem = givenVarProblem(varsReference && knownVariables(varsReference), opts.clusterVars ?? {});
  if (problem) throw new GeneratorInputError(`--var ${problem.key}: ${problem.problem}`);
  if (!varsReference) refuseFolderFormOutsideClusterVars(root, opts.referenceEnv);
  const exampleReference = varsReference ? undefined : loadFluxExampleReference(root, opts.referenceEnv);
  checkHostOptions(opts, Boolean(exampleReference));
  if (varsReference) await generateFromClusterVars(ctx, varsReference);
  else if (exampleReference) await generateFromFluxExample(ctx, exampleReference);
  else await generateFromOverlays(ctx, loadReference(root, opts.referenceEnv));

  const unchecked = ctx.summary.schema_checked?.kinds_without_schema ?? [];
  if (unchecked.length > 0)
    ctx.summary.warnings.push(
      `no schema describes ${unchecked.join(', ')}: these objects were built but not checked against a schema`,
    );
  checkPathMapUsed(ctx);
  applyReplacements(ctx);
  if (opts.pass === 'full' && usesSops(ctx)) planSopsRules(ctx);
  planSourceIgnore(ctx);
  await settleProvenance(ctx);
  planOwnerMarker(ctx, clusterDir);
  if (opts.sourceUrl === undefined && opts.sourceUrlProblem) throw new GeneratorInputError(opts.sourceUrlProblem);
  leftoverGate(ctx);
  keepRecordWhenNothingElseChanges(ctx);
  return { ...changes, summary: ctx.summary, credentials: ctx.credentials };
}

/** One pass for a new cluster, planned then written into the working copy. */
export function generate(options: GenerateOptions): Promise<GenerateResult> {
  return withRepoLimits(options.repoLimits, async () => {
    const plan = await planGeneration(options);
    // A pass aborted while it planned (its step passed its deadline) writes nothing.
    throwIfPassAborted();
    return applyPlan(options.repoDir, plan);
  });
}
