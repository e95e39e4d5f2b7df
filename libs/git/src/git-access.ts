/**
 * How git reaches private servers: credentials from a folder laid out like a mounted Kubernetes
 * Secret (`kubernetes.io/basic-auth`: username, password; `kubernetes.io/ssh-auth`: ssh-privatekey;
 * plus known_hosts), and an extra CA bundle for HTTPS servers with a private CA. Credentials reach
 * git only through files: a credential helper that reads them (HTTPS, and only for the hosts they
 * are meant for) and an ssh command naming the key file. Never a URL, an argument or a message.
 */
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { GitAccessError } from './errors';
import { GitCall, GitCommand, runGitCall } from './git-command';
import { GitConfigEntry, gitConfigEnvironment, NO_REDIRECTS, onlyProtocols } from './egress';
import { HelperProcess, threadHelper } from './helper-process';

export interface GitAccessSettings {
  /** GIT_CREDENTIALS_DIR: username/password and/or ssh-privatekey, known_hosts. */
  credentialsDir?: string;
  /** GIT_CREDENTIALS_HOSTS: the HTTPS hosts (host or host:port) the username/password may be sent to. */
  credentialsHosts: string[];
  /** GIT_CA_FILE: CA certificates (PEM) trusted for HTTPS git servers, on top of the system's. */
  caFile?: string;
  /** Run git under `nice` (niceness +10), so the process's API answers go first when the cores are busy. */
  lowPriority?: boolean;
  /** Start git from a small helper process, so this process's event loop never stalls on a fork. */
  helperProcess?: boolean;
  /** GIT_ALLOWED_SCHEMES: the only protocols git may use (file is added for clones from the local repository cache). */
  allowedSchemes?: string[];
}

/**
 * git's credential protocol: answers `get` for https URLs on the allowed hosts with the files'
 * contents; says nothing otherwise (git then fails with "could not read Username", no prompt).
 */
const CREDENTIAL_HELPER = `#!/bin/sh
[ "$1" = get ] || exit 0
protocol=
host=
while IFS= read -r line; do
  case "$line" in
    protocol=*) protocol=\${line#protocol=} ;;
    host=*) host=\${line#host=} ;;
  esac
done
[ "$protocol" = https ] || exit 0
case ",$GIT_SCAFFOLDER_CREDENTIAL_HOSTS," in
  *",$host,"*) ;;
  *) exit 0 ;;
esac
printf 'username=%s\\n' "$(cat "$GIT_SCAFFOLDER_CREDENTIALS_DIR/username")"
printf 'password=%s\\n' "$(cat "$GIT_SCAFFOLDER_CREDENTIALS_DIR/password")"
`;

/** The system CA bundle git would otherwise use (the inherited settings first, as git reads them). */
function systemCaBundle(env: NodeJS.ProcessEnv): string | undefined {
  return [
    env.GIT_SSL_CAINFO,
    env.SSL_CERT_FILE,
    '/etc/ssl/certs/ca-certificates.crt',
    '/etc/pki/tls/certs/ca-bundle.crt',
  ].find((f): f is string => !!f && existsSync(f));
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The environment git runs with, prepared once per process (files it needs live in a private folder). */
export class GitAccess {
  private constructor(
    readonly env: Record<string, string>,
    /** The program git runs as: git, or `nice git`. */
    readonly binary: GitCall['binary'] = ['git'],
    private readonly host?: HelperProcess,
    /** Configuration every command gets (the credential helper). */
    private readonly config: GitConfigEntry[] = [],
    /** The protocols git may use; undefined: git's own defaults. */
    private readonly protocols?: string[],
  ) {}

  /** No credentials, no extra CA, no protocol list: git as the process environment has it (never following a redirect), started from this process. */
  static readonly NONE = new GitAccess({});

  /** Checks the settings and prepares the files; a problem stops the process at start with its reason. */
  static prepare(settings: GitAccessSettings, inherited: NodeJS.ProcessEnv = process.env): GitAccess {
    const binary: GitCall['binary'] = settings.lowPriority ? ['nice', 'git'] : ['git'];
    // The thread's one helper, shared with the other programs this thread starts (rm of working copies).
    const host = settings.helperProcess ? threadHelper() : undefined;
    const protocols = settings.allowedSchemes && [...new Set(settings.allowedSchemes)];
    if (!settings.credentialsDir && !settings.caFile) return new GitAccess({}, binary, host, [], protocols);
    const own = mkdtempSync(join(tmpdir(), 'gitops-scaffolder-git-'));
    chmodSync(own, 0o700);
    const env: Record<string, string> = {};
    if (settings.caFile) Object.assign(env, caBundle(settings.caFile, own, inherited));
    const given = settings.credentialsDir ? credentials(settings, own) : { env: {}, config: [] };
    return new GitAccess({ ...env, ...given.env }, binary, host, given.config, protocols);
  }

  /**
   * Runs one git command with this access's environment and program, in the helper process when there
   * is one. Aborting `signal` kills git and what it started (ssh, git-remote-https).
   */
  run(command: GitCommand, signal?: AbortSignal): Promise<string> {
    const call: GitCall = { ...command, env: { ...this.env, ...this.configEnvironment(command) }, binary: this.binary };
    return this.host
      ? this.host.call({ kind: 'git', call }, signal).then((out) => out.stdout)
      : runGitCall(call, undefined, signal);
  }

  /**
   * Configuration through the environment, so no caller's argument can undo it: never a redirect (an
   * allowed server would otherwise send git to any host), and only the allowed protocols, plus file
   * for a clone from a local folder (the repository cache), which the API never accepts otherwise.
   */
  private configEnvironment(command: GitCommand): Record<string, string> {
    const fromCache = command.op === 'clone' && isAbsolute(command.source);
    const protocols = this.protocols && (fromCache ? [...this.protocols, 'file'] : this.protocols);
    return gitConfigEnvironment(
      [...this.config, NO_REDIRECTS, ...(protocols ? onlyProtocols(protocols) : [])],
      protocols,
    );
  }
}

/**
 * An extra CA on top of the system bundle. GIT_SSL_CAINFO wins over every other setting git reads
 * (http.sslCAInfo, SSL_CERT_FILE), so an inherited one cannot hide it.
 */
function caBundle(caFile: string, own: string, inherited: NodeJS.ProcessEnv): Record<string, string> {
  const extra = readable(caFile, 'GIT_CA_FILE');
  if (!extra.includes('-----BEGIN CERTIFICATE-----'))
    throw new GitAccessError(`GIT_CA_FILE: ${caFile} holds no PEM certificate`);
  const system = systemCaBundle(inherited);
  const bundle = join(own, 'ca-bundle.pem');
  writeFileSync(bundle, `${system ? readFileSync(system, 'utf8') : ''}\n${extra}\n`, { mode: 0o600 });
  return { GIT_SSL_CAINFO: bundle };
}

function credentials(
  settings: GitAccessSettings,
  own: string,
): { env: Record<string, string>; config: GitConfigEntry[] } {
  const dir = settings.credentialsDir!;
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new GitAccessError(`GIT_CREDENTIALS_DIR: ${dir} is not a folder`);
  const has = (file: string) => existsSync(join(dir, file));
  const env: Record<string, string> = {};
  const config: GitConfigEntry[] = [];
  if (has('username') || has('password')) {
    if (!has('username') || !has('password'))
      throw new GitAccessError(
        `GIT_CREDENTIALS_DIR: ${dir} needs both username and password (a kubernetes.io/basic-auth Secret)`,
      );
    if (settings.credentialsHosts.length === 0) {
      throw new GitAccessError(
        'GIT_CREDENTIALS_HOSTS: name the HTTPS git hosts (host or host:port, comma-separated) the username and password may be sent to',
      );
    }
    const bad = settings.credentialsHosts.find((h) => !HOST.test(h));
    if (bad !== undefined)
      throw new GitAccessError(`GIT_CREDENTIALS_HOSTS: ${JSON.stringify(bad)} is not a host or host:port`);
    const helper = join(own, 'git-credential-from-files');
    writeFileSync(helper, CREDENTIAL_HELPER, { mode: 0o700 });
    // The first entry empties the helper list, so no helper of the system or user config gets asked.
    // '!' runs it through the shell, so a path with spaces stays one word.
    config.push(['credential.helper', ''], ['credential.helper', `!${shellQuote(helper)}`]);
    Object.assign(env, {
      GIT_SCAFFOLDER_CREDENTIALS_DIR: dir,
      GIT_SCAFFOLDER_CREDENTIAL_HOSTS: settings.credentialsHosts.join(','),
    });
  }
  // ssh refuses a key others can read; a mounted Secret's files often are (fsGroup), so ssh gets a private copy.
  let identity: string[] = [];
  if (has('ssh-privatekey')) {
    const key = join(own, 'ssh-privatekey');
    copyFileSync(join(dir, 'ssh-privatekey'), key);
    chmodSync(key, 0o600);
    identity = ['-i', shellQuote(key), '-o', 'IdentitiesOnly=yes'];
  }
  // Always strict: a host not in known_hosts (or no known_hosts at all) is refused before anything is sent.
  const knownHosts = has('known_hosts') ? join(dir, 'known_hosts') : '/dev/null';
  env.GIT_SSH_COMMAND = [
    'ssh',
    '-F',
    '/dev/null',
    ...identity,
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${shellQuote(knownHosts)}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
  ].join(' ');
  return { env, config };
}

function readable(file: string, name: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new GitAccessError(`${name}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
