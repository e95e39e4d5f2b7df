/**
 * The box a build program (kubectl kustomize) runs in when it reads a repository's content, which is
 * code a tenant wrote: an environment of its own (nothing of the service's: no key, password or
 * token to quote), no network, only the folders of the build readable, and CPU time and memory
 * bounded. How much of that the machine allows decides the level:
 *
 * - `bubblewrap`: `bwrap` with every namespace of its own (network, processes, mounts, IPC), a root
 *   holding only the build's folders (read-only) and the program, its own /proc and a minimal /dev;
 * - `network-namespace`: `unshare --net` (as root, or in a user namespace): no network, the
 *   machine's files as the service's user sees them;
 * - `none`: neither can start here (a pod without privileges or user namespaces).
 *
 * At every level the environment is the allowlist below and limits come from `prlimit`; what is left
 * at `none` is held by the checks made before any build (every location a kustomization names, inline
 * plugin configurations included, must lie in the repository) and kustomize's own root-only loading.
 */
import { existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { offlineBuildEnvironment } from './egress';
import { execInHelper } from './helper-process';

export type BoxLevel = 'bubblewrap' | 'network-namespace' | 'none';

/** BUILD_SANDBOX: `auto` takes the strongest level the machine allows; a level demands it (builds are refused without it). */
export type BoxSetting = 'auto' | BoxLevel;
export const BOX_SETTINGS: readonly BoxSetting[] = ['auto', 'bubblewrap', 'network-namespace', 'none'];

/** Stronger first: `auto` takes the first that starts. */
const LEVELS: readonly BoxLevel[] = ['bubblewrap', 'network-namespace', 'none'];

/**
 * Address space a build may reserve. Go reserves about 600 MiB before it allocates (kubectl fails to
 * start under 512 MiB); 2 GiB leaves kustomize 1.4 GiB for the largest layers measured (200
 * services) while a build reading an endless file ends in seconds instead of taking the machine.
 */
export const BUILD_ADDRESS_SPACE_BYTES = 2 * 1024 ** 3;
/** CPU time a build may use: a 200-service layer takes under 5 s; a build looping on crafted input is stopped. */
export const BUILD_CPU_SECONDS = 120;

/**
 * The whole environment of a boxed program: nothing inherited, no program to find on PATH (kustomize
 * would start git for a remote base, which is never wanted), git allowed no protocol, every proxy
 * unreachable.
 */
export function boxEnvironment(): Record<string, string> {
  return { PATH: '/nonexistent', HOME: '/nonexistent', LANG: 'C.UTF-8', ...offlineBuildEnvironment() };
}

/** A command as the helper process runs it: the program, its arguments and its whole environment. */
export interface BoxedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/** `program` found as the service's PATH finds it, links resolved: what the box makes readable. */
export function programPath(program: string, path = process.env.PATH ?? ''): string {
  const found = isAbsolute(program)
    ? program
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, program))
        .find((candidate) => existsSync(candidate));
  if (!found) return program; // starting it fails with ENOENT, which callers report
  return realpathSync(found);
}

/** A folder as given and where it really is (a build may name either). */
const bothSpellings = (dir: string): string[] => {
  const real = existsSync(dir) ? realpathSync(dir) : dir;
  return real === dir ? [dir] : [dir, real];
};

/** bwrap's arguments for `program` reading only `readable`: a fresh root, every namespace its own. */
function bubblewrapArguments(program: string, readable: readonly string[]): string[] {
  const binds = [...new Set(readable.flatMap(bothSpellings))].flatMap((dir) => ['--ro-bind', dir, dir]);
  return [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    program,
    program,
    ...binds,
    '--chdir',
    readable[0] ?? '/',
    '--',
    program,
  ];
}

/** Limits on the program and its children (prlimit from util-linux; without it, none). */
const limitPrefix = (prlimit: string | undefined): string[] =>
  prlimit ? [prlimit, `--as=${BUILD_ADDRESS_SPACE_BYTES}`, `--cpu=${BUILD_CPU_SECONDS}`, '--'] : [];

/** The command running `program args` at `level`, reading only `readable` where the level can enforce it. */
export function boxedCommand(
  level: BoxLevel,
  program: string,
  args: readonly string[],
  readable: readonly string[],
  prlimit: string | undefined = PRLIMIT,
): BoxedCommand {
  const real = programPath(program);
  // Absolute paths, found as the service finds them: the box's own PATH leads nowhere.
  const [unshare, ...unshareOptions] = UNSHARE_NETWORK;
  const boxed =
    level === 'bubblewrap'
      ? [programPath('bwrap'), ...bubblewrapArguments(real, readable)]
      : level === 'network-namespace'
        ? [programPath(unshare), ...unshareOptions, real]
        : [real];
  const [file, ...rest] = [...limitPrefix(prlimit), ...boxed, ...args];
  return { file, args: rest, env: boxEnvironment() };
}

/** prlimit where util-linux has it. */
const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

/** unshare's network namespace: as root directly, otherwise inside a user namespace of its own. */
const UNSHARE_NETWORK =
  typeof process.getuid === 'function' && process.getuid() === 0
    ? ['unshare', '--net', '--']
    : ['unshare', '--user', '--map-root-user', '--net', '--'];

const levels = new Map<string, Promise<BoxLevel>>();

/**
 * The level builds of `program` run at here: the strongest whose box starts the program (its
 * `version --client`) from a folder, tried once per program and thread. With a demanded level, that
 * level when it starts, else a BuildBoxError naming the setting.
 */
export function boxLevel(program: string, setting: BoxSetting = boxSetting()): Promise<BoxLevel> {
  const key = `${program}\0${setting}`;
  if (!levels.has(key)) levels.set(key, probeLevel(program, setting));
  return levels.get(key)!;
}

async function probeLevel(program: string, setting: BoxSetting): Promise<BoxLevel> {
  const candidates = setting === 'auto' ? LEVELS : [setting];
  for (const level of candidates) if (await starts(level, program)) return level;
  throw new BuildBoxError(
    `BUILD_SANDBOX=${setting}: ${program} cannot be started in that box on this machine, so no build runs (see docs/operations.md, "Tenant content")`,
  );
}

async function starts(level: BoxLevel, program: string): Promise<boolean> {
  if (level === 'none') return true;
  // A build's folders are not known yet: the probe's box holds the temporary folder, which exists everywhere.
  const { file, args, env } = boxedCommand(level, program, ['version', '--client'], [realpathSync(tmpdir())]);
  return execInHelper(file, args, { env }).then(
    () => true,
    () => false,
  );
}

/** The box the settings demand cannot be made here. */
export class BuildBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuildBoxError';
  }
}

/** BUILD_SANDBOX as the process environment gives it (the generator's threads and its command line read it alike). */
export function boxSetting(env: NodeJS.ProcessEnv = process.env): BoxSetting {
  const value = (env.BUILD_SANDBOX ?? 'auto').trim() || 'auto';
  if (!(BOX_SETTINGS as readonly string[]).includes(value))
    throw new BuildBoxError(`BUILD_SANDBOX: ${JSON.stringify(value)} is not one of ${BOX_SETTINGS.join(', ')}`);
  return value as BoxSetting;
}
