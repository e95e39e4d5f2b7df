/**
 * Telling repositories apart by URL, and the one form every repository URL is used in. One repository
 * has many spellings (https and ssh, with and without `.git`, scp-like `git@host:path`); the scope
 * check, the ownership check, the read-model and git all use the one form normaliseRepoUrl gives, so
 * no spelling can be checked as one repository and reached as another.
 */
import { execFileSync } from 'node:child_process';
import { posix } from 'node:path';

/** A branch of a remote repository: what a working copy is cloned from and pushed to. */
export interface RepoRef {
  url: string;
  branch: string;
}

const SCP_LIKE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):(?!\/\/)(.*)$/;

/** Whether git reads `url` as scp-like `user@host:path` (an ssh URL without the ssh://). */
export const isScpLike = (url: string): boolean => SCP_LIKE.test(url);

/**
 * `git@host:org/repo.git` as the ssh:// URL Flux's GitRepository accepts; other URLs as they are. (A
 * path relative to the ssh user's home becomes one from the root, as git hosting services serve both.)
 */
export function fluxUrlOf(url: string): string {
  const scp = SCP_LIKE.exec(url);
  return scp ? `ssh://${scp[1]}@${scp[2]}/${scp[3].replace(/^\/+/, '')}` : url;
}

/** The path of a `scheme://authority/path` URL exactly as written: before URL parsing resolves "." and ".." in it. */
const WRITTEN_PATH = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\\]*([^?#]*)/;

/**
 * Characters and encodings a git server may read differently from the URL checked here: a
 * backslash or ";" (path parameters to some servers), and "%2e" ".", "%2f" "/", "%5c" "\" or "%25" "%"
 * (decoded once more by a server, as in team-a%2F..%2Fteam-b).
 */
const AMBIGUOUS_IN_PATH = /[\\;]|%(2e|2f|5c|25)/i;

/**
 * Why git could reach another repository than the one this URL names when checked, or null: the
 * path as written (an ssh server hands it to the file system, which reads `tenant-a//../tenant-b` as
 * tenant-b, where URL parsing resolves it to tenant-a/tenant-b) must have no empty, "." or ".."
 * segment and nothing a server decodes further. One trailing "/" is allowed (and dropped).
 */
function writtenPathProblem(path: string): string | null {
  if (AMBIGUOUS_IN_PATH.test(path))
    return 'must not contain "\\", ";" or a percent-encoded ".", "/", "\\" or "%" (%2e, %2f, %5c, %25)';
  const trimmed = path.replace(/^\//, '').replace(/\/$/, '');
  // No path at all is no ambiguity (a scope's prefix may be a whole host).
  const segments = trimmed === '' ? [] : trimmed.split('/');
  if (segments.includes('')) return 'must not contain an empty path segment ("//")';
  if (segments.some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." path segments';
  return null;
}

/** A URL as git should get it, or why it cannot be given to git. */
type Normalised = { url: string; problem?: undefined } | { url?: undefined; problem: string };

/**
 * The one form of a repository URL: scp-like `user@host:path` as `ssh://user@host/path`, scheme and
 * host as URL parsing writes them (lower case, IPv4 shorthands written out, no final dot), no default
 * port, no trailing "/"; refused when it has a query or fragment, or a path git could resolve to
 * another repository (see writtenPathProblem).
 */
function normalise(url: string): Normalised {
  // URL parsing drops tabs and newlines, which would join "." and "." into ".." after the path was checked.
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f]/.test(url)) return { problem: 'must not contain whitespace or control characters' };
  if (/[?#]/.test(url)) return { problem: 'must not have a query string or fragment' };
  const rewritten = fluxUrlOf(url);
  const written = WRITTEN_PATH.exec(rewritten);
  if (!written) return { problem: 'must be a URL with a scheme (https://, ssh://, or user@host:path)' };
  const problem = writtenPathProblem(written[1]);
  if (problem) return { problem };
  let u: URL;
  try {
    u = new URL(rewritten);
  } catch {
    return { problem: 'is not a valid URL' };
  }
  const userinfo = u.username ? `${u.username}${u.password ? `:${u.password}` : ''}@` : '';
  const port = u.port && !(u.protocol === 'ssh:' && u.port === '22') ? `:${u.port}` : '';
  const host = u.hostname ? canonicalHost(u.hostname) : '';
  return { url: `${u.protocol}//${userinfo}${host}${port}${u.pathname.replace(/\/$/, '')}` };
}

/** Why `url` cannot be used as a repository URL (see normaliseRepoUrl), or null. */
export function repoUrlProblem(url: string): string | null {
  return normalise(url).problem ?? null;
}

/**
 * The URL in the one form the scope check, the ownership check, the read-model and git all use (see
 * normalise); throws for a URL repoUrlProblem refuses (requests are checked with it first).
 */
export function normaliseRepoUrl(url: string): string {
  const { url: normalised, problem } = normalise(url);
  if (problem !== undefined) throw new Error(`repository URL ${problem}`);
  return normalised;
}

/** An IPv4 address written as IPv6 (`[::ffff:7f00:1]`, as URL parsing writes `[::ffff:127.0.0.1]`). */
const IPV4_MAPPED = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/;

/**
 * A host as the network knows it, so one server has one name here: URL parsing's form of it
 * (lower case, IPv4 shorthands such as 127.1 written out, which an ssh:// URL does not get by
 * itself), an IPv4-mapped IPv6 address as the IPv4 address git connects to, and a fully
 * qualified name without its final dot (git.example.org. is git.example.org).
 */
function canonicalHost(hostname: string): string {
  let host = hostname.toLowerCase();
  try {
    host = new URL(`http://${host}/`).hostname;
  } catch {
    // not a host http URLs accept: compared as written
  }
  const mapped = IPV4_MAPPED.exec(host);
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return host.replace(/\.$/, '');
}

/**
 * host/path of a repository URL (canonical host, no `.git`, no trailing "/"; scheme, user and port
 * aside): what the read-model compares. A URL in the one form has the identity of every spelling
 * normaliseRepoUrl turns into it. A URL recorded before normalise refused `//`, "." and ".." (old
 * events) gets its path resolved as the file system behind an ssh server resolves it: the repository
 * git reached with it.
 */
function identity(url: string): string | undefined {
  // A local path is how git records a remote cloned from a folder: the same repository as file://<path>.
  if (url.startsWith('/')) return identity(`file://${url}`);
  const rewritten = fluxUrlOf(url);
  const written = WRITTEN_PATH.exec(rewritten);
  if (!written) return undefined;
  try {
    const u = new URL(rewritten);
    const path = posix
      .normalize(decodeURIComponent(written[1]))
      .replace(/^\/+|\/+$/g, '')
      .replace(/\.git$/, '');
    // A forge's paths name one repository whatever their case (GitHub, GitLab, Gitea: org/Repo is org/repo), so a
    // key cannot take over a cluster folder by spelling its repository otherwise; a local folder's case is its own.
    return u.protocol === 'file:' ? `file:/${path}` : `${canonicalHost(u.hostname)}/${path.toLowerCase()}`;
  } catch {
    return undefined;
  }
}

/** One repository's identity whatever its URL's spelling (https or ssh, .git or not); the URL without credentials where none is known. */
export const repositoryIdentity = (url: string): string => identity(url) ?? withoutCredentials(url);

/** Whether two URLs name the same repository (scheme, user and port aside). */
export function sameRepository(a: string, b: string): boolean {
  const ia = identity(a);
  return ia !== undefined && ia === identity(b);
}

/** Whether a URL carries a password, or user information where no ssh user belongs. */
export function hasCredentials(url: string): boolean {
  if (SCP_LIKE.test(url)) return false;
  try {
    const u = new URL(url);
    return u.password !== '' || (u.username !== '' && u.protocol !== 'ssh:');
  } catch {
    return false;
  }
}

/**
 * The URL with any credentials in it, and any query string or fragment (where tokens get pasted),
 * replaced by ***: for reading runs that were accepted before repo.url refused them (the event log
 * cannot be edited, so they are redacted on the way out).
 */
export function withoutCredentials(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // scp-like git@host:path: no password, no query
  }
  if (!hasCredentials(url) && u.search === '' && u.hash === '') return url;
  const userinfo = hasCredentials(url) ? '***@' : u.username ? `${u.username}@` : '';
  return `${u.protocol}//${userinfo}${u.host}${u.pathname}${u.search || u.hash ? '?***' : ''}`;
}

const origins = new Map<string, string | undefined>();

/** The `origin` remote of the git working copy holding `dir` (read once per folder), if any. */
export function originUrl(dir: string): string | undefined {
  if (!origins.has(dir)) {
    let url: string | undefined;
    try {
      url =
        execFileSync('git', ['-C', dir, 'remote', 'get-url', 'origin'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim() || undefined;
    } catch {
      url = undefined;
    }
    origins.set(dir, url);
  }
  return origins.get(dir);
}
