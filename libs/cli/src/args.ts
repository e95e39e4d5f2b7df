import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { closest } from './suggest';

/** A mistake in how a command was called: one line for the user, exit code 2. */
export class UsageError extends Error {}

/** The line a parseArgs error becomes: the problem in words a user knows, with "did you mean" for a typo. */
export function argumentError(error: Error, options: readonly string[]): string {
  const line = error.message.split('\n')[0];
  const missing = /^Option '(-\w, )?(--[^ ']+)[^']*' argument missing/.exec(line);
  if (missing) return `${missing[2]} needs a value`;
  // "--cluster-name --domain x": the value looks like an option, which is almost always a forgotten value.
  const ambiguous = /^Option '(-\w, )?(--[^ ']+)[^']*' argument is ambiguous/.exec(line);
  if (ambiguous) return `${ambiguous[2]} needs a value (the next word starts with "-")`;
  const unknown = /Unknown option '(--?[^']+)'/.exec(line);
  if (!unknown) return line;
  const guess = suggestOption(unknown[1], options);
  return `unknown option ${unknown[1]}${guess ? `; did you mean --${guess}?` : ''}`;
}

/** Single-letter options with a meaning across tools (`curl -V`, `ssh -V`: the version). */
const CONVENTIONAL_SHORT: Record<string, string> = { V: 'version' };

/** A long option a mistyped one was meant to be; a single-letter one (-V) by convention or by its first letter when only one starts so. */
function suggestOption(given: string, options: readonly string[]): string | undefined {
  const word = given.replace(/^-+/, '');
  if (word.length === 1) {
    if (options.includes(CONVENTIONAL_SHORT[word])) return CONVENTIONAL_SHORT[word];
    const starting = options.filter((o) => o[0] === word.toLowerCase());
    return starting.length === 1 ? starting[0] : undefined;
  }
  return closest(word, options);
}

/** parseArgs in strict mode whose errors are UsageErrors with argumentError's words. */
export function parseCommandLine<T extends ParseArgsOptionsConfig>(
  argv: string[],
  options: T,
  allowPositionals: boolean,
): { values: Record<string, any>; positionals: string[] } {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (e) {
    throw new UsageError(argumentError(e as Error, Object.keys(options)));
  }
}

/** A whole number option (`--count 5`), or a UsageError naming it; `fallback` when not given. */
export function wholeNumber(option: string, value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = /^\d{1,15}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(
      `--${option} must be a whole number${min > 0 ? ` from ${min}` : ''}, not ${JSON.stringify(value.slice(0, 40))}`,
    );
  return n;
}
