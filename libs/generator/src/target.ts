import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Document } from 'yaml';
import { FLUX_ENCRYPTED_REGEX } from '../../sealing/src/sops';
import type { Context } from './context';
import { GeneratorInputError } from './errors';
import { listFiles } from './reference';
import { parseDocuments } from './yaml-docs';

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
    if (isLink) throw new GeneratorInputError(`${parts.slice(0, i + 1).join('/')} in the repository is a symbolic link; refusing to write through it`);
  }
  return join(root, ...parts);
}

/**
 * What the ownership marker records: the cluster a folder was written for and, when the caller says,
 * the key that owns it (the service's requested_by, or the owner an admin acts for).
 */
export function ownerOf(opts: { clusterName: string; domain: string; region: string; referenceEnv: string; owner?: string }): Record<string, string> {
  return { cluster_name: opts.clusterName, domain: opts.domain, region: opts.region, reference_env: opts.referenceEnv, ...(opts.owner ? { owner: opts.owner } : {}) };
}

function readMarker(repoDir: string, dir: string): Record<string, unknown> | undefined {
  const markerPath = insideRepo(repoDir, `${dir}/${OWNER_FILE}`);
  return existsSync(markerPath) ? JSON.parse(readFileSync(markerPath, 'utf8')) : undefined;
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
  if (!marker) throw new GeneratorInputError(`${clusterDir}/ exists and was not written by gitops-scaffolder; refusing to overwrite it`);
  const differs = (key: string) => (key === 'owner' ? marker.owner !== undefined && marker.owner !== owner.owner : marker[key] !== owner[key]);
  if (Object.keys(owner).some(differs)) throw new GeneratorInputError(`${clusterDir}/ belongs to another cluster or owner; refusing to write over it`);
}

/**
 * Marks a folder as this cluster's (and its owner's), so a later run for another cluster or owner
 * refuses to write over it. A pass without an owner (the CLI) keeps the folder's: it never hands
 * a folder over by leaving the owner out.
 */
export function writeOwnerMarker(ctx: Context, dir: string) {
  const previous = ctx.opts.owner ? undefined : readMarker(ctx.opts.repoDir, dir)?.owner;
  const marker = { ...ownerOf(ctx.opts), ...(typeof previous === 'string' ? { owner: previous } : {}) };
  writeIfChanged(ctx, `${dir}/${OWNER_FILE}`, Buffer.from(JSON.stringify(marker, null, 2) + '\n'));
}

/** Writes a file of the working copy `root` (never through a symbolic link). */
export function writeFile(root: string, rel: string, content: Buffer) {
  const abs = insideRepo(root, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

export function writeIfChanged(ctx: Context, repoRel: string, content: Buffer) {
  const abs = insideRepo(ctx.opts.repoDir, repoRel);
  if (existsSync(abs) && readFileSync(abs).equals(content)) return;
  writeFile(ctx.opts.repoDir, repoRel, content);
  ctx.summary.paths_written.push(repoRel);
}

/** Makes a folder hold exactly `files` (and its owner marker): changed files written, stale ones removed, equal ones untouched. */
export function syncFolder(ctx: Context, dir: string, files: Map<string, Buffer>) {
  const abs = insideRepo(ctx.opts.repoDir, dir);
  if (existsSync(abs)) {
    for (const rel of listFiles(abs)) {
      if (files.has(rel) || rel === OWNER_FILE) continue;
      rmSync(insideRepo(ctx.opts.repoDir, `${dir}/${rel}`));
      ctx.summary.paths_removed.push(`${dir}/${rel}`);
    }
  }
  for (const [rel, content] of files) writeIfChanged(ctx, `${dir}/${rel}`, aboutThisCluster(ctx, rel, content));
}

/**
 * Comments copied from the reference talk about the new cluster ("Flux sync objects for the
 * development cluster" becomes "... for the acme-prod cluster"): the reference environment's name,
 * as a word, in YAML comment lines only; values are the models' business.
 */
function aboutThisCluster(ctx: Context, rel: string, content: Buffer): Buffer {
  const from = ctx.opts.referenceEnv;
  if (!/\.ya?ml$/.test(rel) || from === ctx.opts.clusterName) return content;
  const word = new RegExp(`\\b${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'g');
  const text = content.toString('utf8');
  const rewritten = text.replace(/^(\s*#.*)$/gm, (line) => line.replace(word, ctx.opts.clusterName));
  return rewritten === text ? content : Buffer.from(rewritten);
}

/**
 * The repository's .sops.yaml gets (or keeps) a creation rule for this cluster's folder first, so
 * that `sops` run by a person encrypts new files there for the same recipients. Other rules stay.
 */
export function writeSopsRules(ctx: Context) {
  const path = '.sops.yaml';
  const abs = insideRepo(ctx.opts.repoDir, path);
  // Cluster names are DNS labels (no dots), so the folder needs no escaping.
  const pathRegex = `^${ctx.clusterDir}/.*\\.ya?ml$`;
  const doc = existsSync(abs) ? (parseDocuments(readFileSync(abs, 'utf8'), path)[0] ?? new Document({})) : new Document({});
  const current = (doc.toJS()?.creation_rules ?? []) as any[];
  const ours = { path_regex: pathRegex, encrypted_regex: FLUX_ENCRYPTED_REGEX, age: (ctx.opts.ageRecipients ?? []).join(',') };
  doc.set('creation_rules', doc.createNode([ours, ...current.filter((r) => r?.path_regex !== pathRegex)]));
  writeIfChanged(ctx, path, Buffer.from(doc.toString({ lineWidth: 0 })));
  ctx.summary.repo_files.push(path);
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
 * tree. A failed check leaves the repository as it was. Returns the shared folders copied.
 */
export async function stageAndCheck(ctx: Context, files: Map<string, Buffer>, shared: { root: string; dirs: string[] }, check: (stagingDir: string) => Promise<void>): Promise<string[]> {
  return stageFoldersAndCheck(ctx, new Map([[ctx.clusterDir, files]]), shared, (staged) => check(staged.get(ctx.clusterDir)!));
}

/**
 * The same for several folders at once (a cluster folder and its overlay in apps/): each is staged
 * beside its final place; `check` gets the absolute staging folder of each repository folder.
 */
export async function stageFoldersAndCheck(
  ctx: Context,
  folders: Map<string, Map<string, Buffer>>,
  shared: { root: string; dirs: string[] },
  check: (staged: Map<string, string>) => Promise<void>,
): Promise<string[]> {
  const repo = ctx.opts.repoDir;
  const copied: string[] = [];
  const suffix = randomBytes(4).toString('hex');
  const staged = new Map([...folders.keys()].map((dir) => [dir, `${dirname(dir)}/.${basename(dir)}.staging-${suffix}`]));
  try {
    for (const dir of outermost(shared.dirs)) {
      const target = insideRepo(repo, dir);
      if (existsSync(target)) continue;
      // Counted before the copy: a copy refused half-way (a link out of the reference) is removed too.
      copied.push(dir);
      // Links are copied as they are (relative, so they stay links into the copy), and only when they stay inside the reference.
      cpSync(join(shared.root, dir), target, { recursive: true, verbatimSymlinks: true, filter: (src) => linkStaysInside(shared.root, src) });
    }
    for (const [dir, files] of folders) for (const [rel, content] of files) writeFile(repo, `${staged.get(dir)}/${rel}`, content);
    await check(new Map([...staged].map(([dir, rel]) => [dir, insideRepo(repo, rel)])));
  } catch (e) {
    for (const dir of copied) rmSync(join(repo, dir), { recursive: true, force: true });
    throw e;
  } finally {
    for (const rel of staged.values()) rmSync(insideRepo(repo, rel), { recursive: true, force: true });
  }
  return copied;
}

/** For copying a reference folder: true for anything but a symbolic link that is absolute or leads outside the reference (refused, named). */
function linkStaysInside(root: string, src: string): boolean {
  if (!lstatSync(src).isSymbolicLink()) return true;
  const target = readlinkSync(src);
  const resolved = resolve(dirname(src), target);
  if (isAbsolute(target) || (resolved !== root && !resolved.startsWith(root + sep))) {
    throw new GeneratorInputError(`${relative(root, src)} in the reference is a symbolic link to ${target}, outside the reference; refusing to copy it`);
  }
  return true;
}
