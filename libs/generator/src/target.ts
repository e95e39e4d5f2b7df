import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Context, GenerateResult, GenerationPlan, SharedCopy } from './context';
import { GeneratorInputError } from './errors';
import { clusterRules, SOPS_CONFIG, withClusterRule } from './sops-rules';
import { listFiles } from './reference';
import { encryptedInSharedCopy } from './reference-ciphertext';
import { isSeparateRepository, referenceEnvironmentName } from './environment-folder';
import { movePathsIntoOtherRepositories } from './foreign-paths';
import { isRepoFile, readRepoFile, readRepoFileIfPresent } from './repo-files';
import { markerProvenance } from './provenance';

/** Marks a cluster folder as written by the scaffolder for one cluster. */
export const OWNER_FILE = '.gitops-scaffolder.json';

/**
 * The absolute path of `rel` inside the working copy `root`. Refused (a clear error naming it) when
 * the path leaves the working copy or passes through a symbolic link: an existing link anywhere on
 * the way, the file itself included, could point outside, and the write would land there.
 */
export function insideRepo(root: string, rel: string): string {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new GeneratorInputError(`${rel}: must not leave the repository`);
  let path = root;
  for (const [i, part] of parts.entries()) {
    path = join(path, part);
    let isLink: boolean;
    try {
      isLink = lstatSync(path).isSymbolicLink();
    } catch {
      break; // not there yet: nothing below it can be a link
    }
    if (isLink)
      throw new GeneratorInputError(
        `${parts.slice(0, i + 1).join('/')} in the repository is a symbolic link; refusing to write through it`,
      );
  }
  return join(root, ...parts);
}

/**
 * What the ownership marker records: the cluster a folder was written for and, when the caller says,
 * the key that owns it (the service's requested_by, or the owner an admin acts for).
 */
export function ownerOf(opts: {
  clusterName: string;
  domain: string;
  region: string;
  referenceEnv: string;
  owner?: string;
}): Record<string, string> {
  return {
    cluster_name: opts.clusterName,
    domain: opts.domain,
    region: opts.region,
    reference_env: opts.referenceEnv,
    ...(opts.owner ? { owner: opts.owner } : {}),
  };
}

export function readMarker(repoDir: string, dir: string): Record<string, unknown> | undefined {
  const rel = `${dir}/${OWNER_FILE}`;
  insideRepo(repoDir, rel); // a link on the way is refused as a write through it would be
  const marker = readRepoFileIfPresent(repoDir, rel);
  return marker && JSON.parse(marker.toString('utf8'));
}

/**
 * Refuses to write over a cluster folder that another cluster, another owner (or a person) owns. The
 * generator only compares: who may act for whom is the service's decision. A marker written before
 * owners were recorded has none, and its cluster values alone decide. The refusal names neither the
 * marker's values nor its owner: it is read by whoever asked, who may not be the owner.
 */
export function checkOwnership(repoDir: string, clusterDir: string, owner: Record<string, string>) {
  const abs = insideRepo(repoDir, clusterDir);
  if (!existsSync(abs)) return;
  const marker = readMarker(repoDir, clusterDir);
  if (!marker)
    throw new GeneratorInputError(
      `${clusterDir}/ exists and was not written by gitops-scaffolder; refusing to overwrite it`,
    );
  if (!markerAgrees(marker, owner))
    throw new GeneratorInputError(`${clusterDir}/ belongs to another cluster or owner; refusing to write over it`);
}

/** The marker was written for this cluster (and owner, when both name one). */
function markerAgrees(marker: Record<string, unknown>, owner: Record<string, string>): boolean {
  const differs = (key: string) =>
    key === 'owner' ? marker.owner !== undefined && marker.owner !== owner.owner : marker[key] !== owner[key];
  return !Object.keys(owner).some(differs);
}

/** Whether `dir` of the working copy carries this cluster's (and owner's) marker. */
export function ownedBy(repoDir: string, dir: string, owner: Record<string, string>): boolean {
  const marker = readMarker(repoDir, dir);
  return marker !== undefined && markerAgrees(marker, owner);
}

/**
 * Marks a folder as this cluster's (and its owner's), so a later run for another cluster or owner
 * refuses to write over it. A pass without an owner (the CLI) keeps the folder's: it never hands
 * a folder over by leaving the owner out. The marker also records what made the folder (the reference
 * commit and the inputs, see provenance.ts); ownership is decided by ownerOf's fields alone,
 * so markers written before those were recorded are read as they always were.
 */
export function planOwnerMarker(ctx: Context, dir: string) {
  const before = readMarker(ctx.opts.repoDir, dir);
  const previous = ctx.opts.owner ? undefined : before?.owner;
  const marker = {
    ...ownerOf(ctx.opts),
    ...(typeof previous === 'string' ? { owner: previous } : {}),
    ...markerProvenance(ctx, (before?.inputs as { pass?: unknown } | undefined)?.pass),
  };
  planFile(ctx, `${dir}/${OWNER_FILE}`, Buffer.from(JSON.stringify(marker, null, 2) + '\n'));
}

/** The marker fields that decide ownership (ownerOf's and the owner). */
const OWNERSHIP_FIELDS = ['cluster_name', 'domain', 'region', 'reference_env', 'owner'];

/**
 * A pass that changes nothing of the environment but what its markers record writes nothing: the
 * recorded commit and inputs still render exactly these files, and re-scaffolding an unchanged cluster
 * must leave nothing to commit (a full pass after the infra pass that adds no file, a renewed
 * certificate, a newer reference commit that changes nothing here). A marker whose ownership changes,
 * or one written before markers recorded the reference commit, is still written.
 */
export function keepRecordWhenNothingElseChanges(ctx: Context) {
  const { writes, removals, sharedCopies } = ctx.changes;
  const markers = [...writes.keys()].filter((rel) => basename(rel) === OWNER_FILE);
  if (markers.length === 0 || writes.size > markers.length || removals.length > 0 || sharedCopies.length > 0) return;
  for (const rel of markers) {
    const before = readMarker(ctx.opts.repoDir, dirname(rel));
    const next = JSON.parse(writes.get(rel)!.toString('utf8'));
    const sameOwnership = OWNERSHIP_FIELDS.every((key) => before?.[key] === next[key]);
    if (before?.marker_version === undefined || !sameOwnership) continue;
    writes.delete(rel);
    ctx.changes.copiedFiles.delete(rel);
    ctx.summary.paths_written = ctx.summary.paths_written.filter((p) => p !== rel);
  }
}

/** Writes a file of the working copy `root` (never through a symbolic link). */
export function writeFile(root: string, rel: string, content: Buffer) {
  const abs = insideRepo(root, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

/**
 * Writes a file of the working copy unless it already holds exactly `content`: a plan made against
 * another copy of the repository (an earlier pass, a clone since) may name files this one already
 * has, and a file left alone keeps its inode and mtime, so git's index need not read it again.
 * Returns whether it wrote.
 */
export function writeChangedFile(root: string, rel: string, content: Buffer): boolean {
  const abs = insideRepo(root, rel);
  const stat = statSync(abs, { throwIfNoEntry: false });
  if (stat?.isFile() && stat.size === content.length && readFileSync(abs).equals(content)) return false;
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  return true;
}

/**
 * A file as the repository will hold it once the changes planned so far are applied (null: absent).
 * The pass compares with this, not with the disk, so it decides what the writes one after the other
 * used to decide. A path through a symbolic link is refused here, before anything is written.
 */
export function plannedBytes(ctx: Context, rel: string): Buffer | null {
  insideRepo(ctx.opts.repoDir, rel);
  const planned = ctx.changes.writes.get(rel);
  if (planned !== undefined) return planned;
  if (ctx.changes.removals.includes(rel)) return null;
  return readRepoFileIfPresent(ctx.opts.repoDir, rel) ?? null;
}

/**
 * Plans a file's write when its bytes differ from the repository's (only then is it a path written).
 * `referenceFile` (a path in the reference) is the file it was rendered from: when the bytes are that
 * file's exactly, the write is recorded as a copy of it.
 */
export function planFile(ctx: Context, repoRel: string, content: Buffer, referenceFile?: string) {
  if (plannedBytes(ctx, repoRel)?.equals(content)) return;
  ctx.changes.writes.set(repoRel, content);
  ctx.summary.paths_written.push(repoRel);
  if (referenceFile !== undefined && referenceBytes(ctx, referenceFile)?.equals(content))
    ctx.changes.copiedFiles.set(repoRel, referenceFile);
  else ctx.changes.copiedFiles.delete(repoRel);
}

/** A regular file of the reference (null: absent, or not a plain file, which is never taken for a copy). */
function referenceBytes(ctx: Context, rel: string): Buffer | null {
  return isRepoFile(ctx.referenceRoot, rel) ? readRepoFile(ctx.referenceRoot, rel) : null;
}

function planRemoval(ctx: Context, repoRel: string) {
  insideRepo(ctx.opts.repoDir, repoRel); // a path through a link is refused now, not half-way through applying
  ctx.changes.writes.delete(repoRel);
  ctx.changes.copiedFiles.delete(repoRel);
  ctx.changes.removals.push(repoRel);
  ctx.summary.paths_removed.push(repoRel);
}

/** The files a folder will hold once the changes planned so far are applied, relative to it (the disk's in listing order first). */
export function plannedFilesBelow(ctx: Context, dir: string): string[] {
  const abs = insideRepo(ctx.opts.repoDir, dir);
  const planned = [...ctx.changes.writes.keys()]
    .filter((p) => p.startsWith(dir + '/'))
    .map((p) => p.slice(dir.length + 1));
  const onDisk = existsSync(abs) ? listFiles(abs).filter((rel) => !ctx.changes.removals.includes(`${dir}/${rel}`)) : [];
  return [...new Set([...onDisk, ...planned])];
}

/**
 * Plans a folder to hold exactly `files` (and its owner marker): changed files written, stale ones
 * removed, equal ones untouched. `referenceDir` is the reference folder the files were rendered from
 * (the same relative paths), so that files carried over byte for byte are known as copies.
 */
export function planFolder(ctx: Context, dir: string, files: Map<string, Buffer>, referenceDir?: string) {
  for (const rel of plannedFilesBelow(ctx, dir))
    if (!files.has(rel) && rel !== OWNER_FILE) planRemoval(ctx, `${dir}/${rel}`);
  for (const [rel, content] of files)
    planFile(
      ctx,
      `${dir}/${rel}`,
      aboutThisCluster(ctx, rel, movePathsIntoOtherRepositories(ctx, `${dir}/${rel}`, content)),
      referenceDir && `${referenceDir}/${rel}`,
    );
}

/**
 * Comments copied from the reference talk about the new cluster ("Flux sync objects for the
 * development cluster" becomes "... for the acme-prod cluster"): the reference environment's name,
 * as a word, in YAML comment lines only; values are the models' business.
 */
function aboutThisCluster(ctx: Context, rel: string, content: Buffer): Buffer {
  const from = referenceEnvironmentName(ctx.referenceRoot, ctx.opts.referenceEnv);
  if (!/\.ya?ml$/.test(rel) || from === undefined || from === ctx.opts.clusterName) return content;
  const word = new RegExp(`\\b${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'g');
  const text = content.toString('utf8');
  const rewritten = text.replace(/^(\s*#.*)$/gm, (line) => line.replace(word, ctx.opts.clusterName));
  return rewritten === text ? content : Buffer.from(rewritten);
}

/**
 * The repository's .sops.yaml gets a creation rule, first, for exactly the folders this pass
 * encrypts Secrets in (kept ones included), so that `sops` run by a person encrypts there for the
 * same recipients. The cluster's earlier rules (naming only folders it owns: its cluster folder and
 * overlays) are replaced; every other rule stays.
 */
export function planSopsRules(ctx: Context) {
  const owned = [ctx.clusterDir, ...ctx.summary.overlay_paths];
  const sealed = ctx.summary.objects_sealed;
  const rule = clusterRules(
    sealed.filter((o) => !o.sources).map((o) => o.file),
    sealed.flatMap((o) => o.sources ?? []),
    ctx.opts.ageRecipients ?? [],
  );
  const existing = plannedBytes(ctx, SOPS_CONFIG);
  const next = withClusterRule(existing?.toString('utf8') ?? null, rule, (folder) =>
    owned.some((dir) => folder === dir || folder.startsWith(dir + '/')),
  );
  if (next !== null) planFile(ctx, SOPS_CONFIG, Buffer.from(next));
  if (next !== null || rule.length > 0) ctx.summary.repo_files.push(SOPS_CONFIG);
}

/** Flux's source-controller leaves out of the artifact what the repository root's `.sourceignore` names. */
const SOURCE_IGNORE = '.sourceignore';

/**
 * A new repository gets the reference's `.sourceignore` when it has none: without it Flux packs, and a
 * Kustomization without its own ignore rules applies, what the reference keeps out (docs, scripts,
 * Talos or Terraform files beside the Flux tree). A repository's own is never overwritten.
 */
export function planSourceIgnore(ctx: Context) {
  if (!isSeparateRepository(ctx.opts.repoDir, ctx.referenceRoot)) return;
  const reference = referenceBytes(ctx, SOURCE_IGNORE);
  const existing = plannedBytes(ctx, SOURCE_IGNORE);
  if (reference === null || (existing !== null && !existing.equals(reference))) return;
  // Listed in every pass that carries it (an earlier pass's copy included), as the .sops.yaml is.
  planFile(ctx, SOURCE_IGNORE, reference, SOURCE_IGNORE);
  ctx.summary.repo_files.push(SOURCE_IGNORE);
}

/** The outermost of a set of folders (base/, not base/api/). */
export function outermost(dirs: Iterable<string>): string[] {
  const all = [...new Set(dirs)].sort();
  return all.filter((d) => !all.some((other) => other !== d && d.startsWith(other + '/')));
}

/**
 * Writes `files` (paths relative to the cluster folder) into a staging folder beside the cluster
 * folder (same depth, so relative references such as ../../platform resolve the same), copies the
 * shared folders the tree needs when the repository lacks them, and runs `check` on the staged
 * tree. Returns the shared folders the pass copies (planned as copies).
 */
export async function stageAndCheck(
  ctx: Context,
  files: Map<string, Buffer>,
  shared: { root: string; dirs: string[] },
  check: (stagingDir: string) => Promise<void>,
): Promise<string[]> {
  return stageFoldersAndCheck(ctx, new Map([[ctx.clusterDir, files]]), shared, (staged) =>
    check(staged.get(ctx.clusterDir)!),
  );
}

/**
 * The same for several folders at once (a cluster folder and its overlay in apps/): each is staged
 * beside its final place; `check` gets the absolute staging folder of each repository folder. The
 * staging and the shared folders' copies are transient: whatever the check says, the repository is
 * left as it was (folders the staging had to create around them included), and the copies are planned.
 */
export async function stageFoldersAndCheck(
  ctx: Context,
  folders: Map<string, Map<string, Buffer>>,
  shared: { root: string; dirs: string[] },
  check: (staged: Map<string, string>) => Promise<void>,
): Promise<string[]> {
  const repo = ctx.opts.repoDir;
  const suffix = randomBytes(4).toString('hex');
  const staged = new Map(
    [...folders.keys()].map((dir) => [dir, `${dirname(dir)}/.${basename(dir)}.staging-${suffix}`]),
  );
  const copies = outermost(shared.dirs)
    .filter((dir) => !existsSync(insideRepo(repo, dir)))
    .map((dir) => ({ dir, root: shared.root, omit: encryptedInSharedCopy(ctx, shared.root, dir) }));
  const created: string[] = [];
  try {
    for (const copy of copies) {
      // Recorded before the copy: a copy refused half-way (a link out of the reference) goes too, with the folders made for it.
      created.push(firstMissing(repo, copy.dir));
      copySharedFolder(repo, copy);
    }
    for (const [dir, files] of folders) {
      created.push(firstMissing(repo, staged.get(dir)!));
      for (const [rel, content] of files) writeFile(repo, `${staged.get(dir)}/${rel}`, content);
    }
    await check(new Map([...staged].map(([dir, rel]) => [dir, insideRepo(repo, rel)])));
  } finally {
    for (const rel of created) rmSync(join(repo, rel), { recursive: true, force: true });
  }
  ctx.changes.sharedCopies.push(...copies);
  return copies.map((c) => c.dir);
}

/** The outermost folder on the way to `rel` that the repository lacks (what writing `rel` creates), `rel` itself at most. */
function firstMissing(repo: string, rel: string): string {
  const parts = rel.split('/');
  const depth = parts.findIndex((_, i) => !existsSync(join(repo, ...parts.slice(0, i + 1))));
  return parts.slice(0, depth === -1 ? parts.length : depth + 1).join('/');
}

/**
 * Copies a shared folder of the reference into the repository (never through a symbolic link of the
 * repository). Links are copied as they are (relative, so they stay links into the copy), and only
 * when they stay inside the reference; a copy refused half-way is removed.
 */
function copySharedFolder(repo: string, { dir, root, omit = [] }: SharedCopy) {
  const target = insideRepo(repo, dir);
  const left = new Set(omit.map((rel) => join(root, dir, rel)));
  try {
    cpSync(join(root, dir), target, {
      recursive: true,
      verbatimSymlinks: true,
      // The reference's ciphertext stays behind (listed in the summary's omitted_encrypted).
      filter: (src) => !left.has(src) && linkStaysInside(root, src),
    });
  } catch (e) {
    rmSync(target, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Carries out a pass's plan in the working copy `repoDir`: the shared folders copied, stale files
 * removed, changed files written, each through the same refusals of symbolic links as the plan.
 */
export function applyPlan(repoDir: string, plan: GenerationPlan): GenerateResult {
  for (const copy of plan.sharedCopies) copySharedFolder(repoDir, copy);
  // force: a file planned for writing, then removed by a later folder's plan, was never on disk.
  for (const rel of plan.removals) rmSync(insideRepo(repoDir, rel), { force: true });
  for (const [rel, content] of plan.writes) writeChangedFile(repoDir, rel, content);
  return {
    summary: plan.summary,
    credentials: plan.credentials,
    ...(plan.rehearsal ? { rehearsal: plan.rehearsal } : {}),
  };
}

/** For copying a reference folder: true for anything but a symbolic link that is absolute or leads outside the reference (refused, named). */
function linkStaysInside(root: string, src: string): boolean {
  if (!lstatSync(src).isSymbolicLink()) return true;
  const target = readlinkSync(src);
  const resolved = resolve(dirname(src), target);
  if (isAbsolute(target) || (resolved !== root && !resolved.startsWith(root + sep))) {
    throw new GeneratorInputError(
      `${relative(root, src)} in the reference is a symbolic link to ${target}, outside the reference; refusing to copy it`,
    );
  }
  return true;
}
