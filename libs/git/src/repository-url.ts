/**
 * Telling repositories apart by URL, and the URL form Flux needs. One repository has many URLs
 * (https and ssh, with and without `.git`, scp-like `git@host:path`); what identifies it is the host
 * and the path.
 */
import { execFileSync } from 'node:child_process';

/** A branch of a remote repository: what a working copy is cloned from and pushed to. */
export interface RepoRef {
  url: string;
  branch: string;
}

const SCP_LIKE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):(?!\/\/)(.*)$/;

/** `git@host:org/repo.git` as the ssh:// URL Flux's GitRepository accepts; other URLs as they are. */
export function fluxUrlOf(url: string): string {
  const scp = SCP_LIKE.exec(url);
  return scp ? `ssh://${scp[1]}@${scp[2]}/${scp[3].replace(/^\/+/, '')}` : url;
}

/** The URL as git should get it: scheme and host in lower case (`HTTPS://Git.Example.com/x` would otherwise fail in git). */
export function normaliseRepoUrl(url: string): string {
  if (SCP_LIKE.test(url)) return url;
  return new URL(url).href;
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

/** host/path of a repository URL, canonical host, without `.git`, trailing slashes or default ports. */
function identity(url: string): string | undefined {
  // A local path is how git records a remote cloned from a folder: the same repository as file://<path>.
  if (url.startsWith('/')) return identity(`file://${url}`);
  try {
    const u = new URL(fluxUrlOf(url));
    if (u.protocol === 'file:') return `file:${u.pathname.replace(/\/+$/, '').replace(/\.git$/, '')}`;
    return `${canonicalHost(u.hostname)}/${decodeURIComponent(u.pathname)
      .replace(/^\/+|\/+$/g, '')
      .replace(/\.git$/, '')}`;
  } catch {
    return undefined;
  }
}

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
