/**
 * Which forge serves a repository, from the settings (docs/configuration.md#forges):
 *
 * - `FORGE_DEFAULTS`: a JSON list of `{prefix, forge, api_url?, token_file?, auto_merge?}`, one per repository
 *   URL prefix; the longest prefix a repository URL lies under wins (compared as the git scopes compare them,
 *   on a path-segment boundary, in the one form of a repository URL: libs/git's withinPrefix), whatever the
 *   scheme, user and port: one forge serves a repository over https and ssh alike.
 * - `FORGE_CREDENTIALS_DIR`: a mounted Kubernetes Secret with one key per API host (`api.github.com`,
 *   `gitlab.example`, `gitea.example_3000` for a port), like GIT_CREDENTIALS_DIR for git; an entry's own
 *   `token_file` wins, and must be readable by the service's user only (chmod 600), as every credential file
 *   the project reads by name.
 * - `FORGE_CA_FILE`: CA certificates (PEM) trusted for the forges' APIs on top of the system's.
 * - `FORGE_TIMEOUT_SECONDS`: the deadline of one API call.
 *
 * Every problem stops the process at start naming the variable; a token is read at each call (a rotated
 * Secret is used without a restart) and never appears in a message.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { normaliseRepoUrl, repoUrlProblem, repositoryPrefixProblem, withinPrefix } from '#libs/git';
import { credentialFileProblem } from '#libs/runtime';
import { FORGE_KINDS, ForgeError, ForgeKind, RequestedForge } from './forge-port';
import { apiBaseUrl, DEFAULT_FORGE_TIMEOUT_MS, sameApi } from './http/forge-fetch';

/** One FORGE_DEFAULTS entry, checked. */
export interface ForgeDefault {
  prefix: string;
  forge: ForgeKind;
  apiUrl: string;
  tokenFile: string;
  /** Whether requests under this prefix may ask their forge to merge once checks pass. */
  autoMerge: boolean;
}

export interface ForgeSettings {
  defaults: ForgeDefault[];
  /** FORGE_CA_FILE's certificates (PEM). */
  caPem?: string;
  timeoutMs: number;
}

/** A setting that cannot be used; the message starts with the variable's name and holds no token. */
export class ForgeSettingsError extends Error {}

export type ForgeEnv = Record<string, string | undefined>;

const ENTRY_FIELDS = new Set(['prefix', 'forge', 'api_url', 'token_file', 'auto_merge']);

/** The forge settings of an environment (none: no FORGE_DEFAULTS, every merge_request delivery is refused). */
export function forgeSettingsFromEnv(env: ForgeEnv): ForgeSettings {
  const timeout = env.FORGE_TIMEOUT_SECONDS ?? String(DEFAULT_FORGE_TIMEOUT_MS / 1000);
  if (!/^\d+$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > 600)
    throw new ForgeSettingsError('FORGE_TIMEOUT_SECONDS: a whole number of seconds from 1 to 600');
  return {
    defaults: parseDefaults(env.FORGE_DEFAULTS ?? '[]', env.FORGE_CREDENTIALS_DIR),
    caPem: env.FORGE_CA_FILE ? caPem(env.FORGE_CA_FILE) : undefined,
    timeoutMs: Number(timeout) * 1000,
  };
}

function parseDefaults(text: string, credentialsDir: string | undefined): ForgeDefault[] {
  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch {
    throw new ForgeSettingsError(
      'FORGE_DEFAULTS: not JSON (a list of {prefix, forge, api_url, token_file, auto_merge})',
    );
  }
  if (!Array.isArray(entries)) throw new ForgeSettingsError('FORGE_DEFAULTS: must be a JSON list');
  if (credentialsDir !== undefined && !(existsSync(credentialsDir) && statSync(credentialsDir).isDirectory()))
    throw new ForgeSettingsError(`FORGE_CREDENTIALS_DIR: ${credentialsDir} is not a folder`);
  const defaults = entries.map((entry, i) => parseEntry(entry, `FORGE_DEFAULTS[${i}]`, credentialsDir));
  const twice = defaults.find((d, i) => defaults.findIndex((o) => o.prefix === d.prefix) !== i);
  if (twice) throw new ForgeSettingsError(`FORGE_DEFAULTS: prefix ${twice.prefix} is given twice`);
  return defaults;
}

function parseEntry(entry: unknown, where: string, credentialsDir: string | undefined): ForgeDefault {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new ForgeSettingsError(`${where}: must be an object {prefix, forge, api_url, token_file, auto_merge}`);
  const e = entry as Record<string, unknown>;
  const unknown = Object.keys(e).find((k) => !ENTRY_FIELDS.has(k));
  if (unknown) throw new ForgeSettingsError(`${where}: unknown field ${JSON.stringify(unknown)}`);
  const prefix = e.prefix;
  if (typeof prefix !== 'string' || prefix === '')
    throw new ForgeSettingsError(`${where}.prefix: a repository URL prefix`);
  const problem = repositoryPrefixProblem(prefix);
  if (problem) throw new ForgeSettingsError(`${where}.prefix ${prefix} ${problem}`);
  const forge = e.forge as ForgeKind;
  if (!FORGE_KINDS.includes(forge)) throw new ForgeSettingsError(`${where}.forge: one of ${FORGE_KINDS.join(', ')}`);
  if (e.api_url !== undefined && typeof e.api_url !== 'string') throw new ForgeSettingsError(`${where}.api_url: a URL`);
  const apiUrl = ((e.api_url as string | undefined) ?? defaultApiUrl(forge, prefix, where)).replace(/\/+$/, '');
  try {
    apiBaseUrl(forge, apiUrl);
  } catch (err) {
    throw new ForgeSettingsError(`${where}.api_url: ${(err as Error).message}`);
  }
  if (e.auto_merge !== undefined && typeof e.auto_merge !== 'boolean')
    throw new ForgeSettingsError(`${where}.auto_merge: true or false`);
  const tokenFile = tokenFileOf(e.token_file, where, apiUrl, credentialsDir);
  return { prefix, forge, apiUrl, tokenFile, autoMerge: e.auto_merge === true };
}

/** Where a forge serves its API for a prefix's host: GitHub's public API for github.com, `/api/v4` or `/api/v1` on the host otherwise. */
function defaultApiUrl(forge: ForgeKind, prefix: string, where: string): string {
  const url = new URL(normaliseRepoUrl(prefix));
  // An https prefix's port is the web server's, where the API is too; an ssh one's is sshd's.
  const host = url.protocol === 'https:' ? url.host : url.hostname;
  if (forge === 'github') {
    if (host !== 'github.com')
      throw new ForgeSettingsError(`${where}.api_url: name GitHub Enterprise's API (https://${host}/api/v3)`);
    return 'https://api.github.com';
  }
  return `https://${host}${forge === 'gitlab' ? '/api/v4' : '/api/v1'}`;
}

/** The token's file: the entry's own (owner-only), else the API host's key in FORGE_CREDENTIALS_DIR. */
function tokenFileOf(given: unknown, where: string, apiUrl: string, credentialsDir: string | undefined): string {
  if (given !== undefined) {
    if (typeof given !== 'string' || given === '') throw new ForgeSettingsError(`${where}.token_file: a file name`);
    const problem = credentialFileProblem(given);
    if (problem) throw new ForgeSettingsError(`${where}.token_file: ${given} ${problem}`);
    return given;
  }
  const key = new URL(apiUrl).host.replace(':', '_');
  if (credentialsDir === undefined)
    throw new ForgeSettingsError(`${where}: give token_file, or FORGE_CREDENTIALS_DIR with a key ${key}`);
  const file = join(credentialsDir, key);
  if (!existsSync(file))
    throw new ForgeSettingsError(`${where}: FORGE_CREDENTIALS_DIR ${credentialsDir} has no key ${key}`);
  return file;
}

function caPem(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ForgeSettingsError(
      `FORGE_CA_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new ForgeSettingsError(`FORGE_CA_FILE: ${file} holds no PEM certificate`);
  return text;
}

/**
 * The repository as its forge's API names it: the URL's path without `.git` (scp-like and ssh:// URLs as well as
 * https). GitHub and Gitea take owner/name; GitLab the full namespace path (its adapter URL-encodes it).
 */
export function repositoryPathOf(forge: ForgeKind, repoUrl: string): string {
  const problem = repoUrlProblem(repoUrl);
  if (problem) throw new ForgeError(`repository URL ${problem}`);
  const path = new URL(normaliseRepoUrl(repoUrl)).pathname.replace(/^\/+/, '').replace(/\.git$/, '');
  const segments = path.split('/');
  const fits = forge === 'gitlab' ? segments.length >= 2 : segments.length === 2;
  if (!fits || segments.some((s) => s === ''))
    throw new ForgeError(
      `repository URL path ${JSON.stringify(path)} is not a ${forge} repository (${forge === 'gitlab' ? 'group/…/name' : 'owner/name'})`,
    );
  return path;
}

/**
 * A repository URL (or prefix) as the forge serving it is found: its one form with the scheme, user and port left
 * aside (https://host/path), so `git@host:org/envs.git` and `https://host/org/envs` are on the same forge. A URL
 * without a one form stays as it is, and withinPrefix then finds it under no prefix.
 */
export function onForge(url: string): string {
  if (repoUrlProblem(url) !== null) return url;
  const u = new URL(normaliseRepoUrl(url));
  return `https://${u.hostname}${u.pathname}`;
}

/**
 * The settings' entry for a repository: the longest prefix it lies under, or null. A request that names another
 * forge or API than the entry is refused (ForgeError): the token is for the API the settings name, and a request
 * cannot send it elsewhere. Loads no adapter (the API's request checks call it).
 */
export function forgeEntryFor(
  settings: ForgeSettings,
  repoUrl: string,
  requested?: RequestedForge,
): ForgeDefault | null {
  const entry = settings.defaults
    .filter((d) => withinPrefix(onForge(repoUrl), onForge(d.prefix)))
    .sort((a, b) => onForge(b.prefix).length - onForge(a.prefix).length)[0];
  if (!entry) return null;
  if (requested?.forge && requested.forge !== entry.forge)
    throw new ForgeError(`delivery.forge ${requested.forge}: the settings name ${entry.forge} for ${entry.prefix}`);
  if (requested?.apiUrl && !sameApi(requested.apiUrl, entry.apiUrl))
    throw new ForgeError(
      `delivery.api_url ${requested.apiUrl}: the settings name ${entry.apiUrl} for ${entry.prefix} (its token is sent to no other API)`,
    );
  return entry;
}
