/**
 * The cluster-vars environment model: the new cluster's folder is the reference environment's
 * folder with a new cluster-vars ConfigMap (domain, region, issuer, sizes, ...), its sync
 * repointed and its secrets regenerated. The shared base and platform are never edited: the
 * values reach every component through Flux's post-build substitution.
 */
import { Document } from 'yaml';
import { closest } from '#libs/cli/suggest';
import { ClusterVarsReference, isInEnv, loadClusterVarsReference, VarsKustomization } from './cluster-vars-reference';
import {
  clusterSettingsFacts,
  namesADomain,
  ReferenceFacts as CommonFacts,
  valueForNewCluster,
} from './cluster-values';
import { TEMPLATE_ANNOTATION_PREFIX } from './credential-plan';
import { Context, SOPS_DECRYPTION_SECRET, usesSops } from './context';
import { swapDomain } from './domain';
import { GeneratorInputError } from './errors';
import { filledByCluster, holdsCredentials } from './filled-secrets';
import { discoverReferenceDns, isExternalDns, isIssuer, readExternalDns } from './external-dns';
import {
  fluxInstanceSyncPath,
  leftoverRuntimeValues,
  makesFluxInstance,
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
import { ReferenceObject } from './reference';
import { omitReferenceCiphertext } from './reference-ciphertext';
import { renameSealedFiles, sealedNameCandidates } from './sealed-names';
import { substituteObject, substitutionDisabled, VARIABLE_NAME, variableUses } from './substitution';
import { planFolder, stageAndCheck } from './target';
import { isYamlFile, parseDocuments, stringifyDocuments } from './yaml-docs';
import { registryHostWarnings } from './registry-hosts';
import { hostsIn } from './hosts';
import { readRepoFile, readRepoFileIfPresent, repoPathExists } from './repo-files';
import { VarsContext, substitutes, variablesFor, clusterValuesOf, clusterPath } from './cluster-vars-context';
import {
  rootKustomizationPath,
  isKustomizationFile,
  withoutLaterFiles,
  instanceSync,
  fullPassFiles,
  infraRootKustomization,
} from './cluster-vars-first-pass';
import { validateStaged } from './cluster-vars-validate';
import { entryRepositoryUrls } from './leftover-gate';

export { loadClusterVarsReference };

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
    reference_domain: facts.domain ?? '',
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
  Object.assign(base.referenceFacts, {
    clusterNames: typeof referenceClusterName === 'string' ? [referenceClusterName] : [],
    acmeEmails: facts.acmeEmails.filter((e) => !e.includes('${')),
    repositoryUrls: entryRepositoryUrls(ref),
    varsConfigMap: ref.vars.object.name,
  });
  planCredentials(
    ctx,
    everyObject.map((o) => withClusterValueTemplates(ctx, o)),
    typeof referenceClusterName === 'string' ? [referenceClusterName] : [],
  );
  ctx.summary.warnings.push(...registryHostWarnings(vars, ctx.opts.registry, ctx.summary.credential_plan));

  const files = await renderClusterFolder(ctx);
  omitReferenceCiphertext(ctx, ctx.clusterDir, files, ref.envDir);
  renameSealedFiles(ctx, ctx.clusterDir, files);
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

type ReferenceFacts = Omit<CommonFacts, 'envName'>;

/** Every object the reference's Kustomizations apply, as a cluster with these cluster-vars values would receive it. */
function substitutedObjects(ref: ClusterVarsReference, vars: Record<string, string>): ReferenceObject[] {
  return ref.kustomizations.flatMap((k) => {
    if (!substitutes(k)) return k.objects;
    return k.objects.map((o) => ({ ...o, body: substituteObject(o.body, { ...vars, ...k.substitute }).body }));
  });
}

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
  if (!domain) refuseHiddenDomain(ref);
  const acmeEmails = objects
    .filter((o) => isIssuer(o.body))
    .map((o) => o.body.spec?.acme?.email)
    .filter((e): e is string => typeof e === 'string');
  return { domain, region: settings.region ?? dns.region, acmeEmails };
}

/**
 * A reference that names no domain has nothing to move by one (every host it builds must then lie under the new
 * domain, which validation checks). One whose domain is there but unreadable — a domain-named variable its
 * Kustomizations substitute from an encrypted cluster-secrets or a Secret made outside the repository (an
 * ExternalSecret's) — builds hosts the generator could not tell apart: it asks rather than guess, naming them.
 */
function refuseHiddenDomain(ref: ClusterVarsReference) {
  const hidden = new Map<string, string>();
  for (const o of ref.entrySecrets)
    for (const key of Object.keys({ ...o.body.data, ...o.body.stringData }).filter(namesADomain))
      hidden.set(key, `encrypted in ${o.file}`);
  for (const o of ref.kustomizations.flatMap((k) => k.objects))
    for (const use of variableUses(JSON.stringify(o.body)))
      if (namesADomain(use.name) && !use.hasDefault && !(use.name in ref.vars.data) && !hidden.has(use.name))
        hidden.set(use.name, `used in ${o.file}, defined outside ${ref.vars.object.name}`);
  if (hidden.size === 0) return;
  const named = [...hidden].map(([name, where]) => `${name} (${where})`);
  throw new GeneratorInputError(
    `reference environment "${ref.envName}": its domain is held where the generator cannot read it: ${named.slice(0, 5).join('; ')}${named.length > 5 ? `; and ${named.length - 5} more` : ''}. Give --reference-domain`,
  );
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
      .flatMap((k) => k.objects.filter(holdsCredentials).map((o) => [id(o, o.name), k.name] as const)),
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
      // Under the reference's name, or the one the full pass gave a sealed file away from the SOPS rules.
      const kept = afterFull ? [rel, ...sealedNameCandidates(rel)] : [];
      const name = kept.find((n) => readRepoFileIfPresent(ctx.opts.repoDir, `${ctx.clusterDir}/${n}`));
      if (name) files.set(name, readRepoFileIfPresent(ctx.opts.repoDir, `${ctx.clusterDir}/${name}`)!);
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
    } else if (obj.kind === 'Secret' && !filledByCluster(obj.body)) {
      docs[i] = new Document(
        await protectSecret(ctx, `${ctx.clusterDir}/${rel}`, obj.body, obj.namespace ?? 'default'),
      );
    } else if (isGitRepository(obj.body)) {
      repointGitRepository(doc, ctx.opts.sourceUrl, ctx.opts.sourceBranch);
      moveIgnoredPaths(doc, ctx.ref.envDir, ctx.clusterDir);
    } else if (isFluxKustomization(obj.body)) {
      repointKustomization(ctx, doc, obj);
    } else if (makesFluxInstance(obj.body) && fluxInstanceSyncPath(obj.body) !== undefined) {
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
