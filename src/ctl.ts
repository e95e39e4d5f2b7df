/**
 * scaffolderctl: the service's command-line client and ops tool (no `nats` CLI is packaged here). The
 * API commands (create, preview, get, list, logs, cancel, redrive) speak the REST API with an API key
 * (SCAFFOLDER_URL, SCAFFOLDER_API_KEY_FILE); the stream commands read NATS (NATS_URL and the NATS_*
 * credentials, the read-only ops identity) and PostgreSQL (DATABASE_URL). `scaffolderctl --help` and
 * `scaffolderctl COMMAND --help` say how.
 */
import {
  closest,
  completionOptions,
  completionScript,
  optionHelp,
  type OptionTable,
  parseArgsTable,
  parseCommandLine,
  UsageError,
  versionLine,
  wholeNumber,
} from '#libs/cli';
import { EXIT, readStdin, runApiCommand } from './ctl/api-commands';
import { COMMANDS, COMMON, type CommandSpec, GLOBAL, type NumberOption } from './ctl/command-table';
import { printableText } from '#libs/validation';

/** A mistake in how the command was called (exit code 2). */
export { UsageError as CtlError };

/** What the stream commands read. */
const STREAM_ENVIRONMENT = `  NATS_URL                      NATS servers, comma-separated (default nats://127.0.0.1:4222)
  NATS_CREDS | NATS_NKEY_SEED_FILE | NATS_USER + NATS_PASSWORD(_FILE) | NATS_TOKEN(_FILE)
                                how to authenticate (deploy/nats: the ops identity)
  NATS_TLS_CA, NATS_TLS_CERT, NATS_TLS_KEY, NATS_INBOX_PREFIX
  DATABASE_URL, DATABASE_SSL_CA the read-model (status, replay --apply, rebuild-projection)`;

/** What the API commands read. */
const API_ENVIRONMENT = `  SCAFFOLDER_URL                the service's REST API (create, preview, get, list, logs, cancel, redrive)
  SCAFFOLDER_API_KEY_FILE | SCAFFOLDER_API_KEY
                                the API key for them (a file of mode 0600; never on the command line)`;

const ENVIRONMENT = `Environment:\n${API_ENVIRONMENT}\n${STREAM_ENVIRONMENT}`;

const USAGE = `usage: scaffolderctl COMMAND [arguments] [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${`${name} ${c.args}`.padEnd(22)}${c.does}`)
  .join('\n')}

Options: --help (this text, or COMMAND --help), --version; COMMAND --help lists a command's options.
Exit codes: 0 done (a followed run succeeded), 1 the service refused or could not be reached, 2 bad usage,
3 a followed run failed, 4 it was cancelled, 5 --timeout ran out while it went on.

${ENVIRONMENT}`;

const tableOf = (c: CommandSpec): OptionTable => ({ ...c.options, ...COMMON });

function commandHelp(name: string): string {
  const c = COMMANDS[name];
  const environment = {
    api: `\n\nEnvironment:\n${API_ENVIRONMENT}`,
    stream: `\n\nEnvironment:\n${STREAM_ENVIRONMENT}`,
    local: '',
  };
  return `usage: scaffolderctl ${name}${c.args ? ` ${c.args}` : ''} [options]\n\n${c.does}\n\nOptions:\n${optionHelp(tableOf(c))}${environment[c.via]}`;
}

/** `scaffolderctl completion bash|zsh|fish`: the script, from the command table. */
export const completion = (shell: string | undefined) =>
  completionScript(shell, {
    command: 'scaffolderctl',
    options: completionOptions(GLOBAL),
    subcommands: Object.fromEntries(
      Object.entries(COMMANDS).map(([name, c]) => [name, { options: completionOptions(tableOf(c)), args: c.argWords }]),
    ),
  });

/** Numeric options as numbers, each checked (exit 2 for `--stuck-minutes abc`, never NaN). */
function checkNumbers(c: CommandSpec, values: Record<string, any>): Record<string, any> {
  const checked = { ...values };
  for (const [name, o] of Object.entries(c.options))
    if ('min' in o)
      checked[name] =
        values[name] === undefined ? undefined : wholeNumber(name, values[name], 0, (o as NumberOption).min);
  return checked;
}

/** The command's options parsed; an option of another command says whose it is. */
function parseWithHint(argv: string[], command: CommandSpec | undefined) {
  try {
    return parseCommandLine(argv, parseArgsTable(command ? tableOf(command) : GLOBAL), Boolean(command));
  } catch (e) {
    const option = /^unknown option --([^ ;=]+)$/.exec((e as Error).message)?.[1];
    const owners = Object.entries(COMMANDS)
      .filter(([, c]) => option !== undefined && Object.hasOwn(c.options, option))
      .map(([name]) => name);
    if (owners.length === 0) throw e;
    throw new UsageError(`${(e as Error).message} here (it is an option of ${owners.join(', ')})`);
  }
}

/** The command word: the first argument naming a command, else the first that is not an option (an unknown one). */
function commandWord(argv: string[]): number {
  const named = argv.findIndex((a) => Object.hasOwn(COMMANDS, a));
  return named >= 0 ? named : argv.findIndex((a) => !a.startsWith('-'));
}

interface Io {
  stdin: () => Promise<string>;
  signal?: AbortSignal;
}

export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  // Everything printed may hold the service's or a remote's text: no escape sequence reaches the terminal.
  out: (line: string) => void = (l) => process.stdout.write(printableText(l) + '\n'),
  err: (text: string) => void = (t) => process.stderr.write(printableText(t)),
  io: Partial<Io> = {},
): Promise<number> {
  const at = commandWord(argv);
  const name = at >= 0 ? argv[at] : undefined;
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  let values: Record<string, any>;
  let args: string[];
  try {
    if (argv.some((a) => /^--(api-?key|key|token)(=|$)/.test(a)))
      throw new UsageError(
        'an API key is never taken on the command line (ps and shell history would show it): --api-key-file FILE or SCAFFOLDER_API_KEY_FILE',
      );
    if (name !== undefined && !command) {
      const guess = closest(name, Object.keys(COMMANDS));
      throw new UsageError(`unknown command ${name}${guess ? `; did you mean ${guess}?` : ''}`);
    }
    const parsed = parseWithHint(
      argv.filter((_, i) => i !== at),
      command,
    );
    values = command ? checkNumbers(command, parsed.values) : parsed.values;
    args = parsed.positionals;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // One line, as docs/cli.md promises (the whole usage would push the mistake off the screen); after a command's
    // name a second one says where its options are.
    err(`scaffolderctl: ${e.message}\n${command ? `(scaffolderctl ${name} --help for its options)\n` : ''}`);
    return EXIT.usage;
  }
  if (values.version) {
    out(versionLine('scaffolderctl'));
    return 0;
  }
  if (!name || !command) {
    out(USAGE);
    return values.help ? 0 : EXIT.usage;
  }
  if (values.help) {
    out(commandHelp(name));
    return 0;
  }
  if (command.via === 'local') {
    try {
      out(completion(args[0]).replace(/\n$/, ''));
      return 0;
    } catch (e) {
      err(`scaffolderctl: ${(e as Error).message}\n`);
      return EXIT.usage;
    }
  }
  const stdin = io.stdin ?? (() => readStdin());
  if (command.via === 'api') return runApiCommand(name, args, values, env, { out, err, stdin, signal: io.signal });
  // Loaded only for them: the API commands and completion start without NATS, the event schemas or a database driver.
  const { runStreamCommand } = await import('./ctl/stream-runner');
  return runStreamCommand(name, args, values, env, { out, err });
}

// void: main() reports its own errors and resolves to the exit code.
if (require.main === module) void main(process.argv.slice(2)).then((code) => process.exit(code));
