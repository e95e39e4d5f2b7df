/**
 * The cluster-vars environment model: the new cluster's folder is the reference environment's
 * folder with a new cluster-vars ConfigMap (domain, region, issuer, sizes, ...), its sync
 * repointed and its secrets regenerated. The shared base and platform are never edited: the
 * values reach every component through Flux's post-build substitution.
 */
import { shownName, shownPath } from './shown-values';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize, posix, relative } from 'node:path';
import { Document, stringify } from 'yaml';
import { closest } from '../../cli/src/suggest';
import {
  ClusterVarsReference,
  isInEnv,
  loadClusterVarsReference,
  referenceKustomization,
  substitutionOf,
  VarsKustomization,
} from './cluster-vars-reference';
import {
  clusterSettingsFacts,
  ReferenceFacts as CommonFacts,
  valueByKeyName,
  valueForNewCluster,
} from './cluster-values';
import { TEMPLATE_ANNOTATION_PREFIX } from './credential-plan';
import { Context, SOPS_DECRYPTION_SECRET, usesSops } from './context';
import { swapDomain } from './domain';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { discoverReferenceDns, isExternalDns, isIssuer, readExternalDns } from './external-dns';
import {
  buildFluxInstanceSync,
  fluxInstanceSyncObjects,
  fluxInstanceSyncPath,
  isFluxInstance,
  leftoverRuntimeValues,
  repointFluxInstance,
  unheldPullSecrets,
} from './flux-instance';
import {
  FluxLayerKustomization,
  isFluxKustomization,
  isGitRepository,
  moveIgnoredPaths,
  normalizePath,
  repointGitRepository,
  setSopsDecryption,
} from './flux-sync';
import { ingressHosts } from './ingress';
import { checkConsistentReuse, planCredentials, protectSecret } from './protect';
import { renderSecretGenerators } from './secret-generator-output';
import { moveRemoteKeysIn } from './remote-keys';
import { collectTree, isRemote, KUSTOMIZATION_FILES, ReferenceObject } from './reference';
import { substituteObject, substitutionDisabled, VARIABLE_NAME, variableUses } from './substitution';
import { leftoverReferenceValues, ReferenceValues, warnOnce } from './shared-values';
import { planFolder, stageAndCheck } from './target';
import {
  asFluxBuildsIt,
  buildKustomizationGraph,
  BuiltObject,
  checkBuilt,
  checkDependencies,
  FluxBuild,
  kustomizeBuild,
  substituteBuilt,
} from './validate';
import { isYamlFile, parseDocuments, stringifyDocuments } from './yaml-docs';
import { registryHostWarnings } from './registry-hosts';
import { hostsIn } from './hosts';
import { isRepoFolder, readRepoFile, readRepoFileIfPresent, repoPathExists } from './repo-files';

export { loadClusterVarsReference };

interface VarsContext extends Context {
  ref: ClusterVarsReference;
  /** The new cluster's variables. */
  vars: Record<string, string>;
  /** Names of the Kustomizations this pass applies. */
  applied: Set<string>;
  /** Infra pass: plain files of an opened shared folder, copied into the cluster folder (cluster-relative -> template-relative). */
  copiedFiles: Map<string, string>;
  /** What names the reference cluster: whatever of it the new cluster still applies is a warning. */
  referenceValues: ReferenceValues;
}

/** Where the infra pass puts plain files of a shared folder it opens: kustomize loads no file outside a kustomization's folder. */
export const FIRST_PASS_COPIES = 'infra-pass-files';

export async function generateFromClusterVars(base: Context, ref: ClusterVarsReference): Promise<void> {
  checkEntrySecretsProtectable(base, ref);
  // What the reference cluster itself receives: read for its facts and compared with the new cluster's outcome.
  const referenceView = substitutedObjects(ref, ref.vars.data);
  const facts = referenceFacts(base, ref, referenceView);
  const { vars, inherited } = newClusterVars(base, ref, facts);
  const ctx: VarsContext = {
    ...base,
    ref,
    vars,
    applied: new Set(ref.kustomizations.filter((k) => base.opts.pass === 'full' || !k.fullPass).map((k) => k.name)),
    copiedFiles: new Map(),
    referenceValues: { acmeEmails: facts.acmeEmails, domain: facts.domain, newDomain: base.opts.domain },
  };
  const everyObject = [...ref.applied, ...ref.kustomizations.flatMap((k) => k.objects)];
  Object.assign(ctx.summary, {
    environment_model: 'cluster-vars',
    reference_domain: facts.domain,
    reference_region: facts.region ?? null,
    cluster_vars: vars,
    cluster_vars_inherited: inherited,
  });
  ctx.summary.warnings.push(
    ...ref.warnings,
    ...inheritedWarnings(ref, inherited),
    ...earlySecretUses(ref),
    ...unheldPullSecrets(ref.fluxInstance, everyObject, clusterPath(ctx, ref.fluxInstance?.file ?? '')),
  );
  checkVariablesDefined(ctx);
  describeOutcome(ctx, referenceView);
  const referenceClusterName = ref.vars.data.CLUSTER_NAME;
  planCredentials(
    ctx,
    everyObject.map((o) => withClusterValueTemplates(ctx, o)),
    typeof referenceClusterName === 'string' ? [referenceClusterName] : [],
  );
  ctx.summary.warnings.push(...registryHostWarnings(vars, ctx.opts.registry, ctx.summary.credential_plan));

  const files = await renderClusterFolder(ctx);
  checkConsistentReuse(ctx);
  ctx.summary.shared_paths_copied = await stageAndCheck(
    ctx,
    files,
    { root: ref.root, dirs: ref.sharedDirs },
    (staging) => validateStaged(ctx, staging),
  );
  planFolder(ctx, ctx.clusterDir, files, ref.envDir);
}

/**
 * Secrets the cluster's own sync applies (home-ops' SOPS-encrypted cluster-secrets) go out in the
 * first pass, substituted into every Kustomization: only SOPS can protect them then (Flux decrypts
 * with the sops-age key provisioned with the cluster; a SealedSecret would wait for a controller that
 * the Kustomizations substituting it deploy), and the first pass needs the cluster's age recipients.
 */
function checkEntrySecretsProtectable(ctx: Context, ref: ClusterVarsReference) {
  const first = ref.entrySecrets[0];
  if (!first) return;
  const where = `${first.file} (Secret ${first.name}, applied by the cluster's own sync)`;
  if (!usesSops(ctx))
    throw new GeneratorInputError(
      `${where} is substituted into the cluster before anything runs on it, so it can only be SOPS-encrypted: use --secrets-backend sops --age-recipient age1...`,
    );
  if ((ctx.opts.ageRecipients ?? []).length === 0)
    throw new GeneratorInputError(
      `${where} goes out in the first pass: the ${ctx.opts.pass} pass needs the cluster's age public key (--age-recipient age1...)`,
    );
}

type ReferenceFacts = Omit<CommonFacts, 'envName' | 'domain'> & { domain: string };

/** Every object the reference's Kustomizations apply, as a cluster with these cluster-vars values would receive it. */
function substitutedObjects(ref: ClusterVarsReference, vars: Record<string, string>): ReferenceObject[] {
  return ref.kustomizations.flatMap((k) => {
    if (!substitutes(k)) return k.objects;
    return k.objects.map((o) => ({ ...o, body: substituteObject(o.body, { ...vars, ...k.substitute }).body }));
  });
}

type Substitution = Pick<VarsKustomization, 'substituteFrom' | 'substitute'>;

const substitutes = (k: Substitution) => k.substituteFrom.length > 0 || Object.keys(k.substitute).length > 0;

/**
 * The reference cluster's domain, region and ACME e-mail, read from what its platform is given. The
 * domain is the one given (--reference-domain), else its cluster settings' (CLUSTER_DOMAIN, DOMAIN,
 * SECRET_DOMAIN), else its external-dns domain filter.
 */
function referenceFacts(ctx: Context, ref: ClusterVarsReference, objects: ReferenceObject[]): ReferenceFacts {
  const dns = discoverReferenceDns(objects);
  // Without external-dns in the repository (Flux Operator's runtime info, home-ops), the cluster's settings say it.
  const settings = clusterSettingsFacts(ref.vars.data);
  const domain = ctx.opts.referenceDomain ?? settings.domain ?? dns.domain;
  if (!domain)
    throw new GeneratorInputError(
      `reference environment "${ref.envName}": no domain to learn (no CLUSTER_DOMAIN-style value in ${ref.vars.object.name}, no external-dns domain filter): give --reference-domain`,
    );
  const acmeEmails = objects
    .filter((o) => isIssuer(o.body))
    .map((o) => o.body.spec?.acme?.email)
    .filter((e): e is string => typeof e === 'string');
  return { domain, region: settings.region ?? dns.region, acmeEmails };
}

/**
 * The new cluster's variables: values given for it win; values naming the reference's domain,
 * region, ACME e-mail or cluster name move to the new cluster's; the rest (sizes, registry, ...)
 * is inherited and reported as such.
 */
function newClusterVars(
  ctx: Context,
  ref: ClusterVarsReference,
  facts: ReferenceFacts,
): { vars: Record<string, string>; inherited: string[] } {
  const given = ctx.opts.clusterVars ?? {};
  const vars: Record<string, string> = {};
  const inherited: string[] = [];
  for (const [key, value] of Object.entries(ref.vars.data)) {
    const derived = given[key] ?? valueForNewCluster(key, value, { ...facts, envName: ref.envName }, ctx.opts);
    if (derived === undefined) inherited.push(key);
    vars[key] = derived ?? value;
  }
  for (const key of Object.keys(given).sort()) vars[key] ??= given[key];
  return { vars, inherited };
}

/** The reference's cluster-vars values the new cluster replaces (key -> the reference's value). */
function replacedValues(ctx: VarsContext): Record<string, string> {
  const before = ctx.ref.vars.data;
  return Object.fromEntries(Object.entries(before).filter(([key, value]) => value !== '' && ctx.vars[key] !== value));
}

/** A value given for the new cluster that cannot be used, and why. */
export interface VarProblem {
  key: string;
  problem: string;
}

/** The variable names a cluster-vars reference knows: its ConfigMap's keys and every ${NAME} a component uses. */
export interface KnownVariables {
  configMap: string;
  names: Set<string>;
}

export function knownVariables(ref: ClusterVarsReference): KnownVariables {
  const used = ref.kustomizations.flatMap((k) =>
    k.objects.flatMap((o) => variableUses(JSON.stringify(o.body)).map((u) => u.name)),
  );
  return { configMap: ref.vars.object.name, names: new Set([...Object.keys(ref.vars.data), ...used]) };
}

/**
 * The first value given for the new cluster that cannot be used: a name Flux does not accept, a
 * value that could change the YAML Flux substitutes it into (line breaks, control characters), or
 * a name neither cluster-vars nor any component knows. `known` is undefined for an overlay reference.
 */
export function givenVarProblem(known: KnownVariables | undefined, given: Record<string, unknown>): VarProblem | null {
  const keys = Object.keys(given);
  if (keys.length === 0) return null;
  if (!known)
    return { key: keys[0], problem: 'the reference environment has no cluster-vars ConfigMap substituted by Flux' };
  for (const [key, value] of Object.entries(given)) {
    if (!VARIABLE_NAME.test(key))
      return { key, problem: 'not a Flux variable name (letters, digits, _; not starting with a digit)' };
    if (typeof value !== 'string') return { key, problem: 'the value must be a string' };
    // Flux substitutes into YAML text: a line break or control character could add fields to every object.
    // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
    if (/[\u0000-\u001f\u007f]/.test(value))
      return { key, problem: 'the value must not contain line breaks or control characters' };
    if (!known.names.has(key)) {
      const guess = closest(key, [...known.names]);
      return {
        key,
        problem: `the reference's ${known.configMap} has no ${key} and no component uses \${${key}}${guess ? `; did you mean ${guess}?` : ''}`,
      };
    }
  }
  return null;
}

/** Inherited values that still name the reference cluster are almost always a mistake: say so. */
function inheritedWarnings(ref: ClusterVarsReference, inherited: string[]): string[] {
  const names = new RegExp(`(^|[^a-z0-9])${ref.envName.replace(/[-]/g, '\\-')}($|[^a-z0-9])`, 'i');
  return inherited
    .filter((key) => names.test(ref.vars.data[key]))
    .map(
      (key) =>
        `cluster-vars ${key} keeps the reference's value ${JSON.stringify(ref.vars.data[key])}, which names the reference cluster "${ref.envName}"; give the new cluster its own with --var ${key}=VALUE`,
    );
}

/** Names of the Secrets an object reads: env and envFrom references, image pull secrets, secret volumes. */
function secretNamesUsed(node: any, key?: string): string[] {
  if (Array.isArray(node))
    return node.flatMap((item) =>
      key === 'imagePullSecrets' && typeof item?.name === 'string' ? [item.name] : secretNamesUsed(item),
    );
  if (!node || typeof node !== 'object') return [];
  const here: string[] = [];
  if ((key === 'secretKeyRef' || key === 'secretRef') && typeof node.name === 'string') here.push(node.name);
  if (key === 'secret' && typeof node.secretName === 'string') here.push(node.secretName);
  return [...here, ...Object.entries(node).flatMap(([k, v]) => secretNamesUsed(v, k))];
}

/**
 * A first-pass component that reads a Secret only the full pass brings starts broken and waits:
 * the reference is missing a dependsOn that would make Flux keep the order. Said, not refused.
 */
function earlySecretUses(ref: ClusterVarsReference): string[] {
  const id = (o: ReferenceObject, name: string) => `${o.namespace ?? 'default'}/${name}`;
  const later = new Map(
    ref.kustomizations
      .filter((k) => k.fullPass)
      .flatMap((k) =>
        k.objects
          .filter((o) => o.kind === 'Secret' || o.kind === 'SealedSecret')
          .map((o) => [id(o, o.name), k.name] as const),
      ),
  );
  const warnings = new Set<string>();
  for (const k of ref.kustomizations.filter((k) => !k.fullPass)) {
    for (const o of k.objects) {
      for (const name of secretNamesUsed(o.body)) {
        const from = later.get(id(o, name));
        if (!from) continue;
        const reads = `Flux Kustomization ${k.name} goes out in the first pass but ${o.kind} ${o.name} reads Secret ${id(o, name)}, which ${from} brings in the full pass`;
        // The Secret's Kustomization comes after this one: dependsOn would be a cycle. The pods wait for
        // the Secret, which is harmless unless Flux waits for them before applying what follows.
        if (!dependsOnTransitively(ref, from, k.name)) warnings.add(`${reads}: give ${k.name} dependsOn ${from}`);
        else if (waitsForReady(k))
          warnings.add(
            `${reads} only after ${k.name} is ready, and ${k.name} waits for its workloads: set wait: false on ${k.name} or move ${o.kind} ${o.name} after ${from}`,
          );
      }
    }
  }
  return [...warnings];
}

/** Whether Kustomization `name` depends, at any depth, on `on`. */
function dependsOnTransitively(ref: ClusterVarsReference, name: string, on: string, seen = new Set<string>()): boolean {
  const k = ref.kustomizations.find((c) => c.name === name);
  if (!k || seen.has(name)) return false;
  seen.add(name);
  return k.dependsOn.includes(on) || k.dependsOn.some((d) => dependsOnTransitively(ref, d, on, seen));
}

/** A Kustomization Flux reports ready only once its objects are healthy (spec.wait or health checks). */
const waitsForReady = (k: VarsKustomization) =>
  k.declaration.body.spec?.wait === true || (k.declaration.body.spec?.healthChecks ?? []).length > 0;

/** The variables a Kustomization substitutes for the new cluster, or undefined when a source is outside what the generator can see. */
function variablesFor(ctx: VarsContext, k: Substitution): Record<string, string> | undefined {
  let vars: Record<string, string> = {};
  for (const source of k.substituteFrom) {
    if (source.kind === 'ConfigMap' && source.name === ctx.ref.vars.object.name) {
      vars = { ...vars, ...ctx.vars };
      continue;
    }
    const found = ctx.ref.applied.find((o) => o.kind === source.kind && o.name === source.name && !o.shared);
    if (found)
      vars = {
        ...vars,
        ...Object.fromEntries(
          Object.keys({ ...found.body.data, ...found.body.stringData }).map((key) => [
            key,
            (found.kind === 'Secret' ? clusterValuesOf(ctx, found)[key] : undefined) ?? '',
          ]),
        ),
      };
    else if (!source.optional) return undefined;
  }
  return { ...vars, ...k.substitute };
}

/**
 * What a Secret the cluster's Kustomizations substitute from (cluster-template's SOPS-encrypted
 * cluster-secrets) holds of the cluster's values rather than credentials, known by key name
 * (SECRET_DOMAIN, SECRET_ACME_EMAIL, ...): the new cluster's, since the reference's are unreadable.
 */
function clusterValuesOf(ctx: VarsContext, secret: ReferenceObject): Record<string, string> {
  const substituted = ctx.ref.entrySecrets.some((e) => e.file === secret.file && e.index === secret.index);
  if (secret.kind !== 'Secret' || !substituted) return {};
  const keys = Object.keys({ ...secret.body.data, ...secret.body.stringData });
  return Object.fromEntries(
    keys.flatMap((key) => {
      const value = valueByKeyName(key, ctx.opts);
      return value === undefined ? [] : [[key, value]];
    }),
  );
}

/**
 * Such a Secret as the credential plan reads it: each cluster value declared as a literal template
 * (the way a reference declares a value it cannot show), unless the reference declares one itself,
 * so the value is the new cluster's and never a generated password. The file is never changed.
 */
function withClusterValueTemplates(ctx: VarsContext, o: ReferenceObject): ReferenceObject {
  const values = clusterValuesOf(ctx, o);
  if (Object.keys(values).length === 0) return o;
  const annotations = { ...(o.body.metadata?.annotations ?? {}) };
  for (const [key, value] of Object.entries(values)) annotations[`${TEMPLATE_ANNOTATION_PREFIX}${key}`] ??= value;
  return { ...o, body: { ...o.body, metadata: { ...o.body.metadata, annotations } } };
}

/**
 * Every ${TOKEN} a component uses without a default must have a value for the new cluster: Flux
 * would otherwise substitute an empty string and apply a broken object without a word.
 */
function checkVariablesDefined(ctx: VarsContext) {
  const missing = new Map<string, string>();
  for (const k of ctx.ref.kustomizations.filter(substitutes)) {
    const vars = variablesFor(ctx, k);
    if (!vars) {
      ctx.summary.warnings.push(
        `Flux Kustomization ${k.name} substitutes from a source that is not in the repository; its variables were not checked`,
      );
      continue;
    }
    for (const o of k.objects.filter((o) => !substitutionDisabled(o.body))) {
      for (const use of variableUses(JSON.stringify(o.body))) {
        if (!use.hasDefault && !(use.name in vars) && !missing.has(use.name))
          missing.set(use.name, `${o.file} (${o.kind} ${o.name})`);
      }
    }
  }
  if (missing.size === 0) return;
  const list = [...missing].map(([name, where]) => `\${${name}} in ${where}`).join('; ');
  throw new GeneratorInputError(
    `the platform uses variables the new cluster's ${ctx.ref.vars.object.name} does not define: ${list}. Define them in the reference's ${ctx.ref.vars.object.name} or give them with --var NAME=VALUE`,
  );
}

/** Ingress hosts and external-dns settings the new cluster gets; a host that does not follow the new domain is an error. */
function describeOutcome(ctx: VarsContext, before: ReferenceObject[]) {
  const secretValues = Object.assign({}, ...ctx.ref.entrySecrets.map((s) => clusterValuesOf(ctx, s)));
  const after = substitutedObjects(ctx.ref, { ...secretValues, ...ctx.vars });
  after.forEach((o, i) => {
    if (o.kind === 'Ingress') {
      const from = ingressHosts(before[i].body);
      const to = ingressHosts(o.body);
      // The field, not the value: substituted hosts may carry values of the cluster's secrets.
      const stray = hostsIn(o.body, `${o.file} Ingress ${o.name}`).find(
        ({ host }) => swapDomain(host, ctx.opts.domain, ctx.opts.domain) === undefined,
      );
      if (stray) {
        throw new GeneratorInputError(
          `${stray.where}: a host that is not under ${ctx.opts.domain}; the shared platform must build its hosts from cluster-vars`,
        );
      }
      if (to.length > 0) ctx.summary.ingress_hosts.push({ name: o.name, namespace: o.namespace, from, to });
    } else if (isExternalDns(o.body)) {
      ctx.summary.external_dns.push(readExternalDns(o.body, o.file));
    }
  });
}

/** The cluster folder's files for this pass (an infra pass after a full pass carries the full pass's files as they are). */
async function renderClusterFolder(ctx: VarsContext): Promise<Map<string, Buffer>> {
  const { ref } = ctx;
  const fullOnly = fullPassFiles(ctx);
  // An infra pass after a full pass leaves the full pass's files and references alone.
  const afterFull =
    ctx.opts.pass === 'infra' &&
    [...fullOnly].some((rel) => repoPathExists(ctx.opts.repoDir, `${ctx.clusterDir}/${rel}`));
  if (afterFull) ref.kustomizations.forEach((k) => ctx.applied.add(k.name));
  const files = new Map<string, Buffer>();
  for (const rel of ref.envFiles) {
    if (ctx.opts.pass === 'infra' && fullOnly.has(rel)) {
      const existing = afterFull && readRepoFileIfPresent(ctx.opts.repoDir, `${ctx.clusterDir}/${rel}`);
      if (existing) files.set(rel, existing);
      continue;
    }
    const raw = readRepoFile(ref.root, `${ref.envDir}/${rel}`);
    const firstPassOnly = ctx.opts.pass === 'infra' && !afterFull;
    if (ref.rootKustomizationFile !== undefined && `${ref.envDir}/${rel}` === rootKustomizationPath(ref))
      files.set(rel, firstPassOnly ? infraRootKustomization(ctx, raw) : raw);
    else if (firstPassOnly && isKustomizationFile(rel)) files.set(rel, withoutLaterFiles(ctx, rel, raw, fullOnly));
    else files.set(rel, isYamlFile(rel) ? await transformEnvFile(ctx, rel, raw) : raw);
  }
  for (const [copy, source] of ctx.copiedFiles) files.set(copy, readRepoFile(ref.root, source));
  // Generators the infra pass leaves for the full pass stay as the repository has them.
  const generated = [...ref.applied, ...ref.kustomizations.flatMap((k) => k.objects)].filter(
    (o) => !(ctx.opts.pass === 'infra' && fullOnly.has(o.file.slice(ref.envDir.length + 1))),
  );
  await renderSecretGenerators(ctx, generated, ref.envDir, ctx.clusterDir, files);
  ctx.summary.kustomizations = [
    ...instanceSync(ctx),
    ...ref.kustomizations
      .filter((k) => ctx.applied.has(k.name))
      .map((k): FluxLayerKustomization => ({
        name: k.name,
        path: `./${clusterPath(ctx, k.path)}`,
        dependsOn: k.dependsOn,
      })),
  ];
  return files;
}

const rootKustomizationPath = (ref: ClusterVarsReference) => `${ref.entryDir}/${ref.rootKustomizationFile}`;

const isKustomizationFile = (rel: string) => KUSTOMIZATION_FILES.includes(posix.basename(rel));

/**
 * A kustomization of the environment (not its entry) for the first pass: the resources it lists
 * that only the full pass writes are left out (home-ops' apps/<namespace>/kustomization.yaml listing
 * the ks.yaml of an app whose folder holds Secrets), and so is a folder all of whose files are.
 */
function withoutLaterFiles(ctx: VarsContext, rel: string, raw: Buffer, fullOnly: Set<string>): Buffer {
  const file = `${ctx.ref.envDir}/${rel}`;
  const [doc] = parseDocuments(raw.toString('utf8'), file);
  const resources = doc?.toJS()?.resources;
  if (!Array.isArray(resources)) return raw;
  const dir = posix.dirname(rel);
  const later = (entry: unknown) => {
    if (typeof entry !== 'string' || isRemote(entry)) return false;
    const target = posix.normalize(posix.join(dir, entry));
    const below = ctx.ref.envFiles.filter((f) => f === target || f.startsWith(target + '/'));
    return below.length > 0 && below.every((f) => fullOnly.has(f));
  };
  if (!resources.some(later)) return raw;
  doc.set('resources', doc.createNode(resources.filter((entry) => !later(entry))));
  return Buffer.from(doc.toString({ lineWidth: 0 }));
}

/** The Kustomization Flux Operator creates for the new cluster's FluxInstance (none without one). */
function instanceSync(ctx: VarsContext): FluxLayerKustomization[] {
  const body = ctx.ref.fluxInstance?.body;
  const sync = fluxInstanceSyncObjects(body).find(isFluxKustomization);
  return sync
    ? [{ name: sync.metadata.name, path: `./${clusterPath(ctx, fluxInstanceSyncPath(body)!)}`, dependsOn: [] }]
    : [];
}

/** A reference path as the new cluster sees it: the environment folder becomes the cluster folder. */
function clusterPath(ctx: VarsContext, path: string): string {
  return isInEnv(ctx.ref, path) ? ctx.clusterDir + path.slice(ctx.ref.envDir.length) : path;
}

/** Environment files that only the full pass may write: those of full-pass Kustomizations in the environment. */
function fullPassFiles(ctx: VarsContext): Set<string> {
  const { ref } = ctx;
  const out = new Set<string>();
  const toEnvRel = (file: string) => file.slice(ref.envDir.length + 1);
  const waitsForSecrets = (o: ReferenceObject) => ref.kustomizations.some((k) => k.declaration === o && k.fullPass);
  const later = new Set(ref.kustomizations.filter((k) => k.fullPass).map((k) => k.name));
  const declaredIn = (file: string) =>
    [...ref.applied, ...ref.kustomizations.flatMap((k) => k.objects)].filter((o) => o.file === file);
  for (const k of ref.kustomizations.filter((k) => k.fullPass && !k.declaration.shared)) {
    // A ks.yaml declaring Kustomizations of both passes (an app and its issuers) is written without the later ones instead.
    const split = declaredIn(k.declaration.file).some((o) => isFluxKustomization(o.body) && !later.has(o.name));
    if (!split) out.add(toEnvRel(k.declaration.file));
    if (isInEnv(ref, k.path))
      ref.envFiles.filter((f) => `${ref.envDir}/${f}`.startsWith(k.path + '/')).forEach((f) => out.add(f));
  }
  // A declaration file holding a first-pass object as well cannot be left out.
  for (const file of out) {
    const mixed = ref.applied.find((o) => !o.shared && toEnvRel(o.file) === file && !waitsForSecrets(o));
    if (mixed)
      throw new GeneratorInputError(
        `${mixed.file} mixes ${mixed.kind} ${mixed.name} (first pass) with a Kustomization that waits for the cluster's secrets: split the file`,
      );
  }
  return out;
}

/**
 * The entry folder's kustomization for the infrastructure pass: resources that bring only
 * first-pass objects are kept; a folder (shared or the environment's own) that also brings
 * full-pass ones is opened into its entries; files of the full pass are left out.
 */
function infraRootKustomization(ctx: VarsContext, raw: Buffer): Buffer {
  const { ref } = ctx;
  const [doc] = parseDocuments(raw.toString('utf8'), rootKustomizationPath(ref));
  const resources = infraEntries(ctx, ref.entryDir, (doc.toJS()?.resources ?? []) as unknown[]);
  doc.set('resources', doc.createNode(resources));
  return Buffer.from(doc.toString({ lineWidth: 0 }));
}

const SPLITTABLE_KEYS = new Set(['apiVersion', 'kind', 'resources']);

/**
 * A first-pass resource as the environment's kustomization lists it. A plain file of a shared folder
 * that was opened cannot be listed from outside that folder (kustomize refuses files outside a
 * kustomization's root), so it is copied, byte for byte, into the cluster folder for this pass; the
 * full pass lists the shared folder itself again and the copy goes.
 */
function firstPassEntry(ctx: VarsContext, rel: string): string {
  const { ref } = ctx;
  // Listed from the entry folder's kustomization (the environment folder, or home-ops' flux/ inside it).
  if (isInEnv(ref, rel) || isRepoFolder(ref.root, rel)) return posix.relative(ref.entryDir, rel) || '.';
  const listed = `${FIRST_PASS_COPIES}/${rel}`;
  ctx.copiedFiles.set(posix.join(posix.relative(ref.envDir, ref.entryDir), listed), rel);
  return listed;
}

function infraEntries(ctx: VarsContext, fromDir: string, entries: unknown[]): string[] {
  const { ref } = ctx;
  const out: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') continue;
    if (isRemote(entry)) {
      out.push(entry);
      continue;
    }
    const rel = posix.normalize(posix.join(fromDir, entry));
    const waits = broughtBy(ref, rel).some(
      (o) =>
        (isFluxKustomization(o.body) && !ctx.applied.has(o.name)) || o.kind === 'Secret' || o.kind === 'SealedSecret',
    );
    if (!waits) {
      out.push(firstPassEntry(ctx, rel));
      continue;
    }
    // A file that waits is left for the full pass; a folder mixing both passes is opened into its entries.
    if (!isRepoFolder(ref.root, rel)) continue;
    const k = referenceKustomization(ref, rel);
    const extra = Object.keys(k).filter((key) => !SPLITTABLE_KEYS.has(key));
    if (extra.length > 0) {
      throw new GeneratorInputError(
        `${rel} holds Kustomizations of both passes and sets ${extra.join(', ')}, so it cannot be opened for the infrastructure pass: keep phases in folders without transformations`,
      );
    }
    out.push(...infraEntries(ctx, rel, k.resources ?? []));
  }
  return out;
}

/** The objects one resource entry of a kustomization brings: a file's, or all a folder pulls in. */
function broughtBy(ref: ClusterVarsReference, rel: string): ReferenceObject[] {
  if (isRepoFolder(ref.root, rel)) return collectTree(ref.root, ref.envDir, rel, []).objects;
  return ref.applied.filter((o) => o.file === rel);
}

/** One file of the environment folder for the new cluster. */
async function transformEnvFile(ctx: VarsContext, rel: string, raw: Buffer): Promise<Buffer> {
  const { ref } = ctx;
  const file = `${ref.envDir}/${rel}`;
  const objects = [...ref.applied, ...ref.kustomizations.flatMap((k) => k.objects)].filter((o) => o.file === file);
  if (objects.length === 0) return raw;
  const docs = parseDocuments(raw.toString('utf8'), file);
  let changed = false;
  const later = new Set<number>();
  for (const [i, doc] of docs.entries()) {
    const obj = objects.find((o) => o.index === i);
    if (!obj) continue;
    if (isFluxKustomization(obj.body) && isKnownKustomization(ctx, obj) && !ctx.applied.has(obj.name)) {
      later.add(i); // declared beside first-pass ones: left out until its pass
    } else if (obj === ref.vars.object) {
      doc.setIn(['data'], doc.createNode(ctx.vars));
    } else if (obj.kind === 'Secret') {
      docs[i] = new Document(
        await protectSecret(ctx, `${ctx.clusterDir}/${rel}`, obj.body, obj.namespace ?? 'default'),
      );
    } else if (isGitRepository(obj.body)) {
      repointGitRepository(doc, ctx.opts.sourceUrl, ctx.opts.sourceBranch);
      moveIgnoredPaths(doc, ctx.ref.envDir, ctx.clusterDir);
    } else if (isFluxKustomization(obj.body)) {
      repointKustomization(ctx, doc, obj);
    } else if (isFluxInstance(obj.body) && fluxInstanceSyncPath(obj.body) !== undefined) {
      const target = { ...ctx.opts, path: clusterPath(ctx, fluxInstanceSyncPath(obj.body)!) };
      const where = `${ctx.clusterDir}/${rel}`;
      ctx.summary.warnings.push(
        ...repointFluxInstance(doc, obj.body, target, where),
        ...leftoverRuntimeValues(doc, replacedValues(ctx), where),
      );
    } else if (!moveRemoteKeysIn(ctx, doc, `${ctx.clusterDir}/${rel}`)) continue;
    changed = true;
  }
  if (later.size > 0) return Buffer.from(stringifyDocuments(docs.filter((_, i) => !later.has(i))));
  return changed ? Buffer.from(stringifyDocuments(docs)) : raw;
}

/** A Flux Kustomization of the reference cluster's graph (not one in a folder nobody applies). */
const isKnownKustomization = (ctx: VarsContext, obj: ReferenceObject) =>
  ctx.ref.kustomizations.some((k) => k.declaration === obj || k.name === obj.name);

function repointKustomization(ctx: VarsContext, doc: Document, obj: ReferenceObject) {
  const path = normalizePath(String(obj.body.spec?.path ?? ''));
  if (isInEnv(ctx.ref, path)) doc.setIn(['spec', 'path'], `./${clusterPath(ctx, path)}`);
  const k = ctx.ref.kustomizations.find((k) => k.declaration === obj);
  if (k?.holdsSecrets && usesSops(ctx)) setSopsDecryption(doc, SOPS_DECRYPTION_SECRET);
  // Sealed Secrets need no decryption: a SOPS reference's setting would wait for a sops-age Secret the cluster may not have.
  else if (!usesSops(ctx)) doc.deleteIn(['spec', 'decryption']);
}

/**
 * The staged cluster folder built as Flux would: the folder itself, then every Kustomization it
 * applies, with the new cluster's variables substituted, checked for plaintext Secrets, hosts
 * outside the domain, undefined variables and dependencies this pass does not provide.
 */
async function validateStaged(ctx: VarsContext, staging: string): Promise<void> {
  if (!ctx.summary.validated) return;
  const { objects: root, path: entry, entrySyncs } = await buildEntryFolder(ctx, staging);
  checkBuilt(ctx.summary, root, entry, ctx.opts.domain);
  warnOnce(ctx.summary.warnings, leftoverReferenceValues(root, ctx.referenceValues, entry));
  const syncs = root.map((o) => o.body).filter(isFluxKustomization);
  const { kustomizations, checked } = await buildKustomizationGraph(syncs, (b) => buildSync(ctx, staging, b));
  const names = new Set(kustomizations.map((b) => String(b.metadata?.name)));
  // The pass applies exactly the Kustomizations it should, nested ones included: none missing, none that waits for secrets.
  const missingSync = [...ctx.applied].find((name) => !names.has(name));
  if (missingSync)
    throw new GeneratorValidationError(
      `${ctx.clusterDir}: this ${ctx.opts.pass} pass should apply Kustomization ${missingSync}, but neither the cluster folder nor a folder it applies builds it`,
    );
  const early = [...names].find((name) => !ctx.applied.has(name) && !entrySyncs.has(name));
  if (early)
    throw new GeneratorValidationError(
      `${ctx.clusterDir}: Kustomization ${early} waits for the cluster's secrets but the ${ctx.opts.pass} pass applies it`,
    );
  checkDependencies(kustomizations, ctx.clusterDir);
  ctx.summary.validated.push(entry, ...checked.filter((p): p is string => p !== undefined));
}

/** Where a path of the new cluster is while the pass is checked: in the staging folder when it is the cluster's, else in the repository. */
function stagedPath(ctx: VarsContext, staging: string, path: string): string {
  if (path === ctx.clusterDir) return staging;
  return path.startsWith(ctx.clusterDir + '/')
    ? join(staging, path.slice(ctx.clusterDir.length + 1))
    : join(ctx.opts.repoDir, path);
}

/**
 * The staged entry folder (the cluster folder, or home-ops' flux/ inside it) as the cluster's own sync
 * applies it: built as it is, or with the kustomization Flux generates where it has none; plus, for
 * Flux Operator, the source and Kustomization the FluxInstance makes the operator create, with its
 * patches; the folder is substituted when that Kustomization substitutes variables. `entrySyncs`
 * names the operator's sync Kustomization.
 */
async function buildEntryFolder(
  ctx: VarsContext,
  staging: string,
): Promise<{ objects: BuiltObject[]; path: string; entrySyncs: Set<string> }> {
  const path = clusterPath(ctx, ctx.ref.entryDir);
  const folder = await buildAsFlux(ctx, stagedPath(ctx, staging, path), path);
  if (!ctx.ref.fluxInstance) return { objects: folder, path, entrySyncs: new Set() };
  const instance = folder.find((o) => isFluxInstance(o.body) && fluxInstanceSyncPath(o.body) === path);
  if (!instance)
    throw new GeneratorValidationError(
      `${path}: no FluxInstance in the cluster folder syncs ./${path}, so Flux Operator would never apply it`,
    );
  const sync = await buildFluxInstanceSync(instance.body, `${instance.file ?? path} (its spec.sync)`, {
    roots: [ctx.opts.repoDir],
    kubectl: ctx.opts.kubectl,
  });
  const entryKustomization = sync.find((o) => isFluxKustomization(o.body))!.body;
  // A reference may patch postBuild into the sync Kustomization: the folder is then substituted, as Flux would.
  const substitution = substitutionOf(entryKustomization);
  const vars = substitutes(substitution) ? variablesFor(ctx, substitution) : undefined;
  const applied = vars ? folder.map((o) => substituteBuilt(o, vars, path)) : folder;
  return { objects: [...applied, ...sync], path, entrySyncs: new Set([String(entryKustomization.metadata?.name)]) };
}

/**
 * kustomize's build of a Flux Kustomization's folder, with the kustomization Flux generates when it
 * has none, and the Kustomization's inline `spec.patches` applied as kustomize-controller applies them.
 */
async function buildAsFlux(ctx: VarsContext, abs: string, path: string, patches?: unknown[]): Promise<BuiltObject[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'flux-generated-'));
  try {
    const roots = [ctx.opts.repoDir, scratch];
    const shown = (file: string) => normalize(join(path, relative(abs, file)));
    const flux = asFluxBuildsIt(abs, join(scratch, 'generated'), roots, shown);
    let dir = flux.dir;
    if (patches && patches.length > 0) {
      dir = join(scratch, 'patched');
      mkdirSync(dir);
      writeFileSync(join(dir, 'kustomization.yaml'), stringify({ resources: [relative(dir, flux.dir)], patches }));
    }
    return await kustomizeBuild(dir, path, { roots, kubectl: ctx.opts.kubectl, shown: flux.shown });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Builds what one Flux Kustomization of the new cluster applies, substituted; returns the path checked. */
async function buildSync(ctx: VarsContext, staging: string, body: any): Promise<FluxBuild<string | undefined>> {
  const path = normalizePath(String(body.spec?.path ?? ''));
  // The cluster's entry folder (its own sync applies it): built above.
  if (path === clusterPath(ctx, ctx.ref.entryDir)) return { checked: undefined, objects: [] };
  const abs = stagedPath(ctx, staging, path);
  if (!existsSync(abs))
    throw new GeneratorValidationError(
      `Kustomization ${shownName(body.metadata?.name)}: path ${shownPath(`./${path}`)} does not exist in the repository`,
    );
  const objects = await buildAsFlux(ctx, abs, path, body.spec?.patches);
  const k = ctx.ref.kustomizations.find((k) => k.name === body.metadata?.name);
  // Substituted as Flux will; a source outside the repository leaves the values unknown, so unchecked.
  const vars = k && substitutes(k) ? variablesFor(ctx, k) : undefined;
  const applied = vars ? objects.map((o) => substituteBuilt(o, vars, path)) : objects;
  checkBuilt(ctx.summary, applied, path, ctx.opts.domain);
  // The shared platform is every cluster's: a literal reference value in it has no per-cluster place to move to.
  warnOnce(ctx.summary.warnings, leftoverReferenceValues(applied, ctx.referenceValues, path));
  return { checked: path, objects: applied };
}
