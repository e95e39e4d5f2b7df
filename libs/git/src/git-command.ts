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
 * Inherited variables that make git run another program or read other configuration (editors,
 * pagers, askpass, ssh commands, config files, protocol and proxy switches): git needs none of them
 * here. Only the access environment sets such variables, with our own values.
 */
const PROGRAM_VARIABLES =
  /^(EDITOR|VISUAL|PAGER|PREFIX|SSH_ASKPASS|GIT_(ASKPASS|EDITOR|SEQUENCE_EDITOR|PAGER|SSH|SSH_COMMAND|PROXY_COMMAND|EXTERNAL_DIFF|EXEC_PATH|TEMPLATE_DIR|CONFIG|CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|ALLOW_PROTOCOL|PROTOCOL_FROM_USER))$/i;

function gitEnvironment(access: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (e): e is [string, string] => e[1] !== undefined && !PROGRAM_VARIABLES.test(e[0]),
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
