/**
 * What the lifecycle subcommands (drift, upgrade) share on the command line: strict parsing with
 * suggestions, --help, the required flags, and a refusal (GeneratorInputError) as exit 2 with its
 * first line on stderr. Each subcommand gives its options and what it does with them.
 */
import { parseCommandLine, UsageError } from '#libs/cli';
import { GeneratorInputError } from '../errors';

export interface Subcommand {
  name: string;
  help: string;
  options: Parameters<typeof parseCommandLine>[1];
  required: string[];
  /** Runs with the parsed values; resolves to the exit code. */
  run(values: Record<string, any>): Promise<number>;
}

/** Runs a subcommand with its arguments (after its name); resolves to the exit code. */
export async function runSubcommand(command: Subcommand, argv: string[]): Promise<number> {
  const prefix = `generate-gitops-env ${command.name}`;
  const usage = `${command.help.split('\n\n')[1]}\n(${prefix} --help for every option)\n`;
  let values: Record<string, any>;
  try {
    ({ values } = parseCommandLine(argv, command.options, false));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${prefix}: ${e.message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(command.help);
    return 0;
  }
  const missing = command.required.filter((flag) => !values[flag]).map((flag) => `--${flag}`);
  if (missing.length > 0) {
    process.stderr.write(`${prefix}: missing ${missing.join(', ')}\n${usage}`);
    return 2;
  }
  try {
    return await command.run(values);
  } catch (e) {
    process.stderr.write(`${prefix}: ${(e as Error).message.split('\n')[0]}\n`);
    return e instanceof GeneratorInputError ? 2 : 1;
  }
}
