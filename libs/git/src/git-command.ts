import { simpleGit, SimpleGitOptions } from 'simple-git';

/**
 * One git command as simple-git runs it: arguments in a folder (`raw`), or a clone, which keeps
 * simple-git's own checks of the source and options. Plain data, so it can run in another process.
 */
export type GitCommand = { baseDir?: string; config?: string[] } & ({ op: 'raw'; args: string[] } | { op: 'clone'; source: string; dir: string; options: string[] });

/** A command with how git must run: the access environment and the program (git, or nice git). */
export type GitCall = GitCommand & { env: Record<string, string>; binary: ['git'] | ['nice', 'git'] };

/**
 * Inherited variables that make git run another program or read other configuration (editors,
 * pagers, askpass, ssh commands, config files): git needs none of them here, and simple-git refuses
 * to run with them set. Only the access environment sets such variables, with our own values.
 */
const PROGRAM_VARIABLES =
  /^(EDITOR|VISUAL|PAGER|PREFIX|SSH_ASKPASS|GIT_(ASKPASS|EDITOR|SEQUENCE_EDITOR|PAGER|SSH|SSH_COMMAND|PROXY_COMMAND|EXTERNAL_DIFF|EXEC_PATH|TEMPLATE_DIR|CONFIG|CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+))$/i;

function gitEnvironment(access: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !PROGRAM_VARIABLES.test(e[0]));
  return { ...Object.fromEntries(inherited), ...access };
}

/** Runs a call with simple-git in this process (the credential helper and ssh command are ours, never a caller's). */
export async function runGitCall(call: GitCall): Promise<string> {
  const options: Partial<SimpleGitOptions> = {
    binary: call.binary,
    config: call.config ?? [],
    unsafe: { allowUnsafeSshCommand: true, allowUnsafeConfigEnvCount: true, allowUnsafeCredentialHelper: true },
    ...(call.baseDir ? { baseDir: call.baseDir } : {}),
  };
  const git = simpleGit(options).env(gitEnvironment(call.env));
  if (call.op === 'clone') return String(await git.clone(call.source, call.dir, call.options));
  return git.raw(call.args);
}
