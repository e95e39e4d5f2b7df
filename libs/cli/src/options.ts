import type { ParseArgsOptionsConfig } from 'node:util';
import type { ValueHint } from './completion';

/** One option of a command: parseArgs's fields, and what its help and shell completion say of it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's name in the help (FILE, N, URL). */
  value?: string;
  /** What the value completes to in a shell (default: free text). */
  hint?: ValueHint;
  help: string;
}

export type OptionTable = Record<string, OptionSpec>;

/** The table parseArgs reads (only its own fields). */
export function parseArgsTable(table: OptionTable): ParseArgsOptionsConfig {
  return Object.fromEntries(
    Object.entries(table).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
    ]),
  );
}

/** The help's lines of a table: `  -f, --file FILE      the request`. */
export function optionHelp(table: OptionTable): string {
  const heads = Object.entries(table).map(
    ([name, o]) => `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` ${o.value}` : ''}`,
  );
  const width = Math.max(...heads.map((h) => h.length)) + 2;
  return Object.values(table)
    .map((o, i) => `  ${heads[i].padEnd(width)}${o.help}`)
    .join('\n');
}
