/**
 * Reads of a working copy (and of the reference) that never follow a link and never take in more than
 * MAX_REPO_FILE_BYTES: a tenant's repository is code, and a link to /dev/zero or /proc/self/environ, or a
 * 100 MB file, must be refused by name before it is read, not read until the process runs out of memory.
 * Every read and existence check of repository content in the generator goes through here.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { checkoutLimitProblem, CheckoutSize, DEFAULT_REPO_LIMITS, RepoLimits } from '#libs/runtime';
import { GeneratorInputError } from './errors';

/**
 * The limits of the pass this code runs for (the service's settings), found here instead of handed through
 * every reader; passes share a generator thread, so they cannot be a global of it.
 */
const passLimits = new AsyncLocalStorage<RepoLimits>();

/** Runs `work` with `limits` for every read it makes (the defaults when none are given). */
export function withRepoLimits<T>(limits: RepoLimits | undefined, work: () => Promise<T>): Promise<T> {
  return limits ? passLimits.run(limits, work) : work();
}

export const repoLimits = (): RepoLimits => passLimits.getStore() ?? DEFAULT_REPO_LIMITS;

/** What a path is, links not followed. */
export type RepoEntryKind = 'file' | 'folder' | 'link' | 'other';

/**
 * Where each root read lately really is. A pass reads hundreds of files of one root, and each lookup
 * costs a system call per folder of the path; a root (a pass's working copy in a folder of its own
 * random name, the reference) does not move while it is read. Bounded: the oldest is forgotten.
 */
const realRoots = new Map<string, string>();
const REAL_ROOTS_KEPT = 64;

function realRoot(root: string): string {
  const known = realRoots.get(root);
  if (known !== undefined) return known;
  const real = realpathSync.native(root);
  if (realRoots.size >= REAL_ROOTS_KEPT) realRoots.delete(realRoots.keys().next().value!);
  realRoots.set(root, real);
  return real;
}

/**
 * The absolute path of `rel` in `root`, refused when the folder holding it leads out of `root` (a link on
 * the way: O_NOFOLLOW and lstat look at the last component only). A folder that does not exist holds nothing.
 */
function pathIn(root: string, rel: string): string {
  const abs = join(root, rel);
  // The root itself (`.`) is the caller's to trust: its folder is above it.
  if (relative(root, abs) === '') return abs;
  let folder: string;
  try {
    folder = realpathSync.native(dirname(abs));
  } catch {
    return abs;
  }
  const real = realRoot(root);
  if (folder !== real && !folder.startsWith(real + sep))
    throw new GeneratorInputError(
      `${rel}: a folder on its way is a symbolic link out of the repository; refusing to read through it`,
    );
  return abs;
}

/** What `rel` is in `root` (undefined: absent), links never followed. */
export function repoEntry(root: string, rel: string): RepoEntryKind | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(pathIn(root, rel), { throwIfNoEntry: false });
  } catch (e) {
    // A file where a folder of the path should be (`apps.yaml/kustomization.yaml`): nothing is there.
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw e;
  }
  if (!stat) return undefined;
  if (stat.isSymbolicLink()) return 'link';
  return stat.isFile() ? 'file' : stat.isDirectory() ? 'folder' : 'other';
}

export const isRepoFolder = (root: string, rel: string) => repoEntry(root, rel) === 'folder';
export const isRepoFile = (root: string, rel: string) => repoEntry(root, rel) === 'file';
/** Whether anything is at `rel`; a link counts (it is there, and a write or copy refuses it by name). */
export const repoPathExists = (root: string, rel: string) => repoEntry(root, rel) !== undefined;

/** The refusal of a file that is no regular file, or too large, named by its path in the repository. */
const refused = (rel: string, why: string) => new GeneratorInputError(`${rel}: ${why}; refusing to read it`);

/** Opens a file without following a link (a FIFO would block without O_NONBLOCK; a regular file ignores it). */
function openNoFollow(abs: string, rel: string): number {
  try {
    return openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw refused(rel, 'a symbolic link, which is never followed');
    throw e;
  }
}

/** Reads an open regular file whole, never past `cap` bytes (a file growing meanwhile is refused too). */
function readCapped(fd: number, rel: string, cap: number): Buffer {
  const stat = fstatSync(fd);
  if (!stat.isFile()) throw refused(rel, 'not a regular file');
  const tooLarge = () =>
    refused(rel, `larger than ${cap} bytes, the limit MAX_REPO_FILE_BYTES sets for a file of a repository`);
  if (stat.size > cap) throw tooLarge();
  const buffer = Buffer.alloc(stat.size + 1);
  let length = 0;
  for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0;)
    length += n;
  if (length > cap) throw tooLarge();
  return buffer.subarray(0, length);
}

/** A regular file of `root` (a working copy or the reference): a link, a device or a file over the limit is refused by name. */
export function readRepoFile(root: string, rel: string): Buffer;
export function readRepoFile(root: string, rel: string, encoding: 'utf8'): string;
export function readRepoFile(root: string, rel: string, encoding?: 'utf8'): Buffer | string {
  const fd = openNoFollow(pathIn(root, rel), rel);
  try {
    const bytes = readCapped(fd, rel, repoLimits().maxFileBytes);
    return encoding ? bytes.toString(encoding) : bytes;
  } finally {
    closeSync(fd);
  }
}

/** A regular file of `root`, or undefined when nothing is there (anything else there is refused as readRepoFile does). */
export function readRepoFileIfPresent(root: string, rel: string): Buffer | undefined {
  return repoEntry(root, rel) === undefined ? undefined : readRepoFile(root, rel);
}

/** What a walk of a working copy found: its size, and the links that lead out of it. */
interface WorkingCopyWalk extends CheckoutSize {
  escapingLinks: string[];
}

/** A link that is absolute or leads up and out of `root`. */
function leadsOut(root: string, rel: string): boolean {
  const target = readlinkSync(join(root, rel));
  return isAbsolute(target) || relative(root, resolve(dirname(join(root, rel)), target)).startsWith('..');
}

/** Walks a folder, links not followed, `.git` left out; stops once a limit is passed (the walk of a million files would be the attack). */
function walk(root: string, rel: string, limits: RepoLimits, found: WorkingCopyWalk): void {
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    if (rel === '' && entry.name === '.git') continue;
    if (checkoutLimitProblem(found, limits)) return;
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      walk(root, child, limits, found);
      continue;
    }
    found.files += 1;
    found.bytes += lstatSync(join(root, child)).size;
    if (entry.isSymbolicLink() && leadsOut(root, child)) found.escapingLinks.push(child);
  }
}

/**
 * Refuses a working copy over MAX_REPO_FILES or MAX_REPO_BYTES, or with a link that leads out of it
 * (absolute, or up and out: a pass would read or write through it), before anything of it is read or built.
 */
export function checkWorkingCopy(root: string, limits: RepoLimits = repoLimits()): void {
  const found: WorkingCopyWalk = { bytes: 0, files: 0, escapingLinks: [] };
  walk(root, '', limits, found);
  const problem = checkoutLimitProblem(found, limits);
  if (problem) throw new GeneratorInputError(`${problem}; refusing to read it`);
  if (found.escapingLinks.length > 0)
    throw new GeneratorInputError(
      `the working copy has links that lead out of it, which are never read or written through: ${found.escapingLinks.join(', ')}`,
    );
}
