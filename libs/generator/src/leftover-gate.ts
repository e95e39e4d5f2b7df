/**
 * The leftover gate, the last step of a pass: `--replace OLD=NEW` rewrites the new cluster's own files, then every
 * identifier of the reference still in them is listed in the summary (file, object, field, the flag that moves
 * it), and `--strict` refuses the pass while any is listed. Shared files (applied by several clusters) are never
 * rewritten here; they are the models' business (patches in the cluster's own files, or warnings).
 */
import { GeneratorInputError } from './errors';
import { Context } from './context';
import { asFluxInstance } from './flux-instance';
import { isSeparateRepository, referenceEnvironmentName } from './environment-folder';
import {
  dottedField,
  findLeftovers,
  isSecretValue,
  leftoverLine,
  namesCluster,
  objectName,
  ReferenceIdentifier,
  wordPattern,
} from './leftovers';
import { OWNER_FILE, planFile, plannedBytes, plannedFilesBelow } from './target';
import { parseDocuments, readBodies, rewriteStrings, stringifyDocuments } from './yaml-docs';

/** The new cluster's own folders: the cluster folder and the folders outside it that are its alone. */
const ownedFolders = (ctx: Context) => [ctx.clusterDir, ...ctx.summary.overlay_paths];

/** Every file of the new cluster's own folders as the repository will hold it once the pass is applied. */
function ownedFiles(ctx: Context): Array<[string, Buffer]> {
  return ownedFolders(ctx).flatMap((dir) =>
    plannedFilesBelow(ctx, dir).flatMap((rel): Array<[string, Buffer]> => {
      // The owner marker records the pass (its reference among it); Flux never reads it.
      const bytes = rel === OWNER_FILE ? null : plannedBytes(ctx, `${dir}/${rel}`);
      return bytes ? [[`${dir}/${rel}`, bytes]] : [];
    }),
  );
}

/** Encrypted files are never rewritten as text: a SOPS file's MAC or a sealed value would no longer open. */
const isEncrypted = (text: string) => text.includes('ENC[AES256_GCM,') || /^kind:\s*SealedSecret\s*$/m.test(text);

/**
 * What is wrong with one replace pair (null: nothing): an OLD that is empty or a value with a line break could
 * change the YAML around it. The CLI's --replace and a request's `replace` are checked alike.
 */
export function replacementProblem(from: string, to: string): string | null {
  return from === '' || /[\p{Cc}]/u.test(from + to)
    ? 'OLD must be non-empty and neither may hold a control character'
    : null;
}

/** `--replace` pairs as given, every bad one named at once. */
export function checkReplacements(replace: Record<string, string>) {
  const problems = Object.entries(replace).flatMap(([from, to]) => {
    const problem = replacementProblem(from, to);
    return problem ? [`--replace ${JSON.stringify(from.slice(0, 40))}: ${problem}`] : [];
  });
  if (problems.length > 0) throw new GeneratorInputError(problems.join('; '));
}

/** A --replace pair as the scan matches its identifiers: OLD as a whole word (`main`, never the `main` of `domain`). */
interface Replacement {
  from: string;
  to: string;
  pattern: RegExp;
}

/**
 * Applies `--replace OLD=NEW` to the new cluster's own files, longest OLD first (so `a.example.com` wins over
 * `example.com`): in YAML, string values only (comments, keys, a Git branch, a Secret's values are kept); in other
 * files, the text. Encrypted files are never rewritten. Each OLD that no file holds is a warning.
 */
export function applyReplacements(ctx: Context) {
  const pairs: Replacement[] = Object.entries(ctx.opts.replace ?? {})
    .sort(([a], [b]) => b.length - a.length)
    .map(([from, to]) => ({ from, to, pattern: wordPattern(from) }));
  if (pairs.length === 0) return;
  const used = new Set<string>();
  for (const [file, bytes] of ownedFiles(ctx)) {
    const text = bytes.toString('utf8');
    if (isEncrypted(text)) continue;
    const next = /\.ya?ml$/.test(file) ? replacedInYaml(text, file, pairs, used) : replacedIn(text, pairs, used);
    if (next === undefined || next === text) continue;
    planFile(ctx, file, Buffer.from(next));
    ctx.summary.replaced.push(file);
  }
  for (const { from } of pairs)
    if (!used.has(from))
      ctx.summary.warnings.push(
        `--replace ${from}=...: no file of the new cluster's own holds ${JSON.stringify(from)}`,
      );
}

function replacedIn(text: string, pairs: readonly Replacement[], used: Set<string>): string {
  return pairs.reduce((t, { from, to, pattern }) => {
    const next = t.replace(pattern, () => to);
    if (next !== t) used.add(from);
    return next;
  }, text);
}

/** The YAML with every pair replaced in its string values; undefined when nothing changed (its bytes are kept). */
function replacedInYaml(text: string, file: string, pairs: readonly Replacement[], used: Set<string>) {
  let docs;
  try {
    docs = parseDocuments(text, file);
  } catch {
    return undefined; // not YAML the generator reads: validation already said so, or Flux never reads it
  }
  let changed = false;
  for (const doc of docs) {
    const object = objectName(doc.toJS());
    changed =
      rewriteStrings(doc, (value, { path }) => {
        const field = dottedField(path);
        if (isSecretValue(object, field) || !namesCluster(field)) return undefined;
        return replacedIn(value, pairs, used);
      }) || changed;
  }
  return changed ? stringifyDocuments(docs) : undefined;
}

/** An endpoint every cluster has (Talos' KubePrism on 127.0.0.1, localhost), empty, or a ${VARIABLE} substituted later. */
const LOCAL_OR_VARIABLE = /^$|^(https?:\/\/)?(127\.|localhost\b|\[?::1)|\$\{/;

/** Fields whose literal value is the reference cluster's API endpoint (a CNI's, a control plane's). */
const ENDPOINT_FIELD = /(^|\.)(k8sServiceHost|controlPlaneEndpoint|apiServerEndpoint|apiServerHost|endpoint)$/;

/**
 * Identifiers found in the files themselves: an ACME e-mail of an Issuer that is not the new cluster's (the
 * generator sets the new one wherever it knows the issuer), an API endpoint a CNI or control plane is given.
 */
function identifiersInFiles(ctx: Context, files: Array<[string, Buffer]>): ReferenceIdentifier[] {
  const found: ReferenceIdentifier[] = [];
  for (const [file, bytes] of files) {
    const text = bytes.toString('utf8');
    // Only issuers and HelmReleases are read here: a file naming neither is not parsed.
    if (!/\.ya?ml$/.test(file) || !/Issuer|HelmRelease/.test(text) || isEncrypted(text)) continue;
    let bodies: readonly any[];
    try {
      bodies = readBodies(text, file);
    } catch {
      continue;
    }
    for (const body of bodies) {
      const email = /^(Cluster)?Issuer$/.test(body?.kind ?? '') ? body.spec?.acme?.email : undefined;
      if (typeof email === 'string' && !email.includes('${') && email !== ctx.opts.acmeEmail)
        found.push({ kind: 'acme-email', value: email });
      if (body?.kind === 'HelmRelease') found.push(...endpointsIn(body.spec?.values, 'spec.values'));
    }
  }
  return found;
}

function endpointsIn(value: unknown, path: string, depth = 0): ReferenceIdentifier[] {
  if (depth > 20 || !value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const field = `${path}.${k}`;
    if (typeof v === 'string' && ENDPOINT_FIELD.test(field) && !LOCAL_OR_VARIABLE.test(v))
      return [{ kind: 'endpoint' as const, value: v.replace(/^https?:\/\//, '').replace(/:\d+$/, '') }];
    return endpointsIn(v, field, depth + 1);
  });
}

/** The URLs the reference cluster's own sync reads: its entry folder's GitRepositories and its FluxInstance's sync (or the flux-instance chart's). */
export function entryRepositoryUrls(ref: {
  applied: ReadonlyArray<{ body: any }>;
  fluxInstance?: { body: any };
}): string[] {
  const urls = ref.applied.filter((o) => o.body?.kind === 'GitRepository').map((o) => o.body.spec?.url);
  return [...urls, asFluxInstance(ref.fluxInstance?.body)?.spec?.sync?.url].filter(
    (u): u is string => typeof u === 'string',
  );
}

/** `host/owner/name` of a Git URL in any spelling (https, ssh://git@host/, git@host:owner/name.git). */
export function repositoryCore(url: string): string | undefined {
  const m = /^(?:[a-z+]+:\/\/)?(?:[^@/]+@)?([^/:]+)[/:](.+?)(?:\.git)?\/?$/i.exec(url.trim());
  return m ? `${m[1]}/${m[2].replace(/^\/+/, '')}` : undefined;
}

/** Every identifier of the reference the gate looks for, from what the pass learnt of it and from the files. */
function referenceIdentifiers(ctx: Context, files: Array<[string, Buffer]>): ReferenceIdentifier[] {
  const { summary, opts } = ctx;
  const env = referenceEnvironmentName(ctx.referenceRoot, opts.referenceEnv);
  // The reference's repository is a leftover only where the new cluster syncs from another one.
  const elsewhere = opts.sourceUrl !== undefined || isSeparateRepository(opts.repoDir, ctx.referenceRoot);
  const movedSource = (ctx.referenceFacts.repositoryUrls ?? []).flatMap((url) => {
    const core = repositoryCore(url);
    return core && elsewhere && core !== repositoryCore(opts.sourceUrl ?? '') ? [core] : [];
  });
  return [
    ...(ctx.referenceFacts.clusterNames ?? []).map((value) => ({ kind: 'cluster-name' as const, value })),
    ...(env ? [{ kind: 'environment' as const, value: env }] : []),
    ...summary.hosts.filter((h) => h.from !== h.to).map((h) => ({ kind: 'host' as const, value: h.from })),
    ...(summary.reference_domain ? [{ kind: 'domain' as const, value: summary.reference_domain }] : []),
    ...(summary.reference_region ? [{ kind: 'region' as const, value: summary.reference_region }] : []),
    ...(ctx.referenceFacts.acmeEmails ?? []).map((value) => ({ kind: 'acme-email' as const, value })),
    ...movedSource.map((value) => ({ kind: 'repository-url' as const, value })),
    ...identifiersInFiles(ctx, files),
  ];
}

/**
 * Lists every identifier of the reference left in the new cluster's own files (summary.leftovers); with
 * `--strict`, refuses the pass naming every one at once.
 */
export function leftoverGate(ctx: Context) {
  const files = ownedFiles(ctx);
  const { opts } = ctx;
  const scan = findLeftovers(files, referenceIdentifiers(ctx, files), {
    domain: opts.domain,
    clusterName: opts.clusterName,
    acmeEmail: opts.acmeEmail,
    region: opts.region,
    given: Object.values(opts.replace ?? {}),
    varsConfigMap: ctx.summary.environment_model === 'cluster-vars' ? ctx.referenceFacts.varsConfigMap : undefined,
  });
  ctx.summary.leftovers = scan.leftovers;
  ctx.summary.leftovers_not_listed = scan.notListed;
  if (scan.notListed > 0)
    ctx.summary.warnings.push(
      `leftover scan: ${scan.notListed} more finding(s) or file(s) over the scan's bounds were not listed`,
    );
  if (opts.strict && (scan.leftovers.length > 0 || scan.notListed > 0))
    throw new GeneratorInputError(
      `--strict: ${scan.leftovers.length + scan.notListed} identifier(s) of the reference left in the new cluster: ` +
        scan.leftovers.map((l) => leftoverLine(l)).join('; '),
    );
}
