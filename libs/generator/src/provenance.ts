/**
 * What made an environment, recorded in its ownership marker beside who owns it: the reference commit
 * (when the reference is a git working copy) and every generation input that shapes the output, so git
 * alone is enough to render the environment again as that commit made it (drift now, upgrades later).
 * No secret value is recorded: supplied credentials by key name only, registry credentials by
 * presence. The sealing certificate and age recipients are not recorded at all: they shape only
 * credentials, which a render never reproduces (they are sealed anew each time), and a certificate
 * renewed every 30 days would otherwise rewrite the marker of an unchanged environment.
 */
import type { SealingScope } from '#libs/sealing';
import type { Context, Pass, SecretsBackend } from './context';
import { isSeparateRepository } from './environment-folder';
import { ReferenceRevision, referenceRevision } from './reference-git';

/** 1: cluster values and owner only (no marker_version field); 2: with the reference commit and the inputs. */
export const MARKER_VERSION = 2;

/** The generator options that change a pass's output, as the marker records them (names as in the service's API). */
export interface GenerationInputs {
  acme_email: string;
  pass: Pass;
  secrets_backend: SecretsBackend;
  sealing_scope: SealingScope;
  infra_layer: string;
  /** Registry pull credentials were given (their values never are recorded). */
  registry_credentials?: true;
  /** The keys ("<namespace>/<secret>/<key>") supplied credentials were given for, never their values. */
  supplied_credentials?: string[];
  cluster_vars?: Record<string, string>;
  host_map?: Record<string, string>;
  path_map?: Record<string, string>;
  replace?: Record<string, string>;
  reference_domain?: string;
  source_url?: string;
  source_branch?: string;
}

/** The marker's fields beyond the owner's (ownerOf): what made the folder. */
export interface MarkerProvenance {
  marker_version: number;
  reference_commit?: string;
  /** The reference's files differed from reference_commit when the pass ran: that commit alone cannot reproduce the output. */
  reference_dirty?: true;
  /** The reference's folder inside its repository, when it is not the repository's top (the shipped templates/platform). */
  reference_path?: string;
  /** The environment was written into the reference's own working copy. */
  in_reference_repository?: true;
  inputs: GenerationInputs;
}

/** A mapping when it holds anything, else nothing (an empty map shapes no output and would only lengthen the marker). */
const given = (map: Record<string, string> | undefined) =>
  map && Object.keys(map).length > 0 ? { ...map } : undefined;

/**
 * The inputs of a pass that shape its output (strict, validate and rotate_credentials do not: they
 * refuse, check, or change only credentials). The pass recorded is the furthest the folders hold: an
 * infra pass after the full pass keeps what the full pass wrote.
 */
export function generationInputs(ctx: Context, previousPass?: unknown): GenerationInputs {
  const o = ctx.opts;
  const supplied = Object.keys(o.suppliedCredentials ?? {}).sort();
  const inputs: GenerationInputs = {
    acme_email: o.acmeEmail,
    pass: previousPass === 'full' ? 'full' : o.pass,
    secrets_backend: o.secretsBackend ?? 'sealed-secrets',
    sealing_scope: o.sealingScope,
    infra_layer: o.infraLayer,
    registry_credentials: o.registry ? true : undefined,
    supplied_credentials: supplied.length > 0 ? supplied : undefined,
    cluster_vars: given(o.clusterVars),
    host_map: given(o.hostMap),
    path_map: given(o.pathMap),
    replace: given(o.replace),
    reference_domain: o.referenceDomain,
    source_url: o.sourceUrl,
    source_branch: o.sourceBranch,
  };
  // Absent rather than undefined: the marker's JSON and a comparison of two records see the same fields.
  return Object.fromEntries(Object.entries(inputs).filter(([, v]) => v !== undefined)) as unknown as GenerationInputs;
}

/**
 * A pass, as the maps below know it: its planned changes, which every context of the pass shares (a
 * model's own context is a copy of the pass's with more fields).
 */
type PassKey = Context['changes'];
/** Each pass's read of the reference's revision, started with the pass (startProvenanceRead). */
const reads = new WeakMap<PassKey, Promise<ReferenceRevision | undefined>>();
/** Each pass's revision once read (settleProvenance), and the provenance made of it. */
const revisions = new WeakMap<PassKey, ReferenceRevision | undefined>();
const recorded = new WeakMap<PassKey, MarkerProvenance>();

/**
 * Starts reading where the reference stands in git (three git programs): started as the pass begins,
 * they run while its thread reads and generates, instead of holding the thread at the end of the pass.
 */
export function startProvenanceRead(ctx: Context): void {
  if (!reads.has(ctx.changes)) reads.set(ctx.changes, referenceRevision(ctx.referenceRoot));
}

/** Waits for the pass's read of the reference's revision; markerProvenance needs it. */
export async function settleProvenance(ctx: Context): Promise<void> {
  startProvenanceRead(ctx);
  if (revisions.has(ctx.changes)) return;
  const revision = await reads.get(ctx.changes);
  revisions.set(ctx.changes, revision);
  // The summary tells the caller (the service's pass events) what the markers record.
  if (revision) ctx.summary.reference_commit = revision.commit;
  if (revision?.dirty) ctx.summary.reference_dirty = true;
}

/**
 * The provenance of a pass (every folder the pass marks records the same). `previousPass` is the pass
 * the folder's marker recorded before, if any. The pass's revision read must have settled first.
 */
export function markerProvenance(ctx: Context, previousPass?: unknown): MarkerProvenance {
  const known = recorded.get(ctx.changes);
  if (known) return known;
  if (!revisions.has(ctx.changes))
    throw new Error('markerProvenance before settleProvenance: the reference revision is not read');
  const revision = revisions.get(ctx.changes);
  const provenance: MarkerProvenance = {
    marker_version: MARKER_VERSION,
    ...(revision ? { reference_commit: revision.commit } : {}),
    ...(revision?.dirty ? { reference_dirty: true as const } : {}),
    ...(revision?.path ? { reference_path: revision.path } : {}),
    ...(isSeparateRepository(ctx.opts.repoDir, ctx.referenceRoot) ? {} : { in_reference_repository: true as const }),
    inputs: generationInputs(ctx, previousPass),
  };
  recorded.set(ctx.changes, provenance);
  return provenance;
}
