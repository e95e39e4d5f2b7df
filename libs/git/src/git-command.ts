import { ProgramRunner, processGroups } from './process-groups';

/**
 * One git command: arguments in a folder (`raw`), or a clone of a source into a folder. Plain data,
 * so it can run in another process.
 */
export type GitCommand = { baseDir?: string; config?: string[] } & (
  { op: 'raw'; args: string[] } | { op: 'clone'; source: string; dir: string; options: string[] }
);

/** A command with how git must run: the access environment and the program (git, or nice git). */
export type GitCall = GitCommand & { env: Record<string, string>; binary: ['git'] | ['nice', 'git'] };

/**
 * The only inherited variables git gets: where programs and the home folder are, the locale, the
 * system's CA bundle, an ssh agent and the operator's proxy for git's own traffic. Nothing else of
 * the service's environment (its API keys, database and NATS passwords) reaches git or the programs
 * it starts (a hook, a filter, ssh), and no inherited variable makes git run another program or read
 * other configuration: only the access environment sets such variables. Of git's traces only the
 * trace2 event log into a file passes: the others write to stderr, which becomes a run's message,
 * and the curl trace would carry credential headers there.
 */
const INHERITED_VARIABLES =
  /^(PATH|HOME|USER|LOGNAME|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z]+|SSL_CERT_FILE|SSL_CERT_DIR|GIT_SSL_CAINFO|SSH_AUTH_SOCK|(HTTPS?|ALL|NO)_PROXY|(https?|all|no)_proxy)$/;
const inheritedByGit = ([name, value]: [string, string]) =>
  INHERITED_VARIABLES.test(name) || (name === 'GIT_TRACE2_EVENT' && value.startsWith('/'));

function gitEnvironment(access: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (e): e is [string, string] => e[1] !== undefined && inheritedByGit(e as [string, string]),
  );
  return { ...Object.fromEntries(inherited), ...access };
}

/** git's arguments for a call: `-c` settings first, then the command; `--` keeps a clone's source and folder from reading as options. */
export function gitArguments(call: GitCommand): string[] {
  const config = (call.config ?? []).flatMap((c) => ['-c', c]);
  const command = call.op === 'clone' ? ['clone', ...call.options, '--', call.source, call.dir] : call.args;
  return [...config, ...command];
}

/**
 * Runs a call in this process, git in a process group of its own (with the ssh or git-remote-https it
 * starts): aborting `signal` kills them all. Rejects with git's stderr as the message.
 */
export async function runGitCall(
  call: GitCall,
  programs: ProgramRunner = processGroups(),
  signal?: AbortSignal,
): Promise<string> {
  const [program, ...prefix] = call.binary;
  const { stdout } = await programs.run(program, [...prefix, ...gitArguments(call)], {
    cwd: call.baseDir,
    env: gitEnvironment(call.env),
    signal,
  });
  return stdout;
}
