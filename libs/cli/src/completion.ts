/**
 * Shell completion for bash, zsh and fish, generated from a command's option tables (the same
 * parseArgs tables its parser reads), so that a new option completes without a hand-written script.
 */
import { UsageError } from './args';

/** What an option's value completes to: a file, a folder, free text (nothing), or one of fixed words. */
export type ValueHint = 'file' | 'dir' | 'text' | readonly string[];

export interface CompletionOption {
  name: string;
  short?: string;
  /** Absent for a flag without a value. */
  value?: ValueHint;
  multiple?: boolean;
  /** What zsh and fish show beside it. */
  help?: string;
}

export interface CompletionSpec {
  command: string;
  /** Options valid everywhere (before or without a subcommand). */
  options: CompletionOption[];
  /** Subcommands with their own options and the words their first argument takes. */
  subcommands?: Record<string, { options: CompletionOption[]; args?: readonly string[] }>;
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/**
 * The completion options of a parseArgs table (or the named part of it); a string option completes as
 * `hints` or its own `hint` says, else as free text.
 */
export function completionOptions(
  table: Record<
    string,
    { type: 'string' | 'boolean'; short?: string; multiple?: boolean; hint?: ValueHint; help?: string }
  >,
  hints: Record<string, ValueHint> = {},
  only: readonly string[] = Object.keys(table),
): CompletionOption[] {
  return only.map((name) => {
    const o = table[name];
    if (!o) throw new Error(`no option --${name} in the table`);
    return {
      name,
      short: o.short,
      multiple: o.multiple,
      value: o.type === 'string' ? (hints[name] ?? o.hint ?? 'text') : undefined,
      help: o.help,
    };
  });
}

/** The descriptions of a hand-written help text's option lines (`  --repo DIR     working copy ...`), by option name. */
export function helpFromText(text: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of text.matchAll(/^ {2}(?:-\w, )?--([a-z][a-z0-9-]*)(?: [A-Z=_.|]+)? {2,}(\S.*)$/gm))
    found[m[1]] ??= m[2].trim();
  return found;
}

/** The table with the descriptions of a help text added where the table has none. */
export function withHelp<T extends Record<string, object>>(
  table: T,
  help: Record<string, string>,
): Record<keyof T, T[keyof T] & { help?: string }> {
  return Object.fromEntries(Object.entries(table).map(([name, o]) => [name, { help: help[name], ...o }])) as any;
}

/**
 * The `completion SHELL` of a command without subcommands whose help is written by hand: its option
 * table, the descriptions from the help's option lines, and what string options complete to.
 */
export function commandCompletion(
  command: string,
  table: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>,
  helpText: string,
  hints: Record<string, ValueHint> = {},
): (shell: string | undefined) => string {
  const options = completionOptions(withHelp(table, helpFromText(helpText)), hints);
  return (shell) => completionScript(shell, { command, options });
}

/** A description as one short line (what a completion menu shows). */
const oneLine = (help: string | undefined) => {
  const line = (help ?? '').replace(/\s+/g, ' ').trim();
  return line.length > 70 ? `${line.slice(0, 69)}…` : line;
};
/** Inside zsh's single quotes and _arguments' brackets. */
const zshDescription = (help?: string) =>
  oneLine(help)
    ? `[${oneLine(help)
        .replace(/\\/g, '\\\\')
        .replace(/'/g, `'\\''`)
        .replace(/([[\]])/g, '\\$1')}]`
    : '';
/** Inside fish's single quotes. */
const fishDescription = (help?: string) =>
  oneLine(help) ? ` -d '${oneLine(help).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : '';

/** The completion script of a command for a shell, or a UsageError naming the shells there are. */
export function completionScript(shell: string | undefined, spec: CompletionSpec): string {
  checkWords(spec);
  if (shell === 'bash') return bashScript(spec);
  if (shell === 'zsh') return zshScript(spec);
  if (shell === 'fish') return fishScript(spec);
  throw new UsageError(
    `completion needs a shell: ${SHELLS.join(', ')}${shell ? `, not ${JSON.stringify(shell.slice(0, 20))}` : ''}`,
  );
}

/** Every word goes into the scripts unquoted or single-quoted: only plain words are allowed in. */
function checkWords(spec: CompletionSpec): void {
  const words = [
    spec.command,
    ...allOptions(spec).flatMap((o) => [o.name, o.short ?? 'x', ...(Array.isArray(o.value) ? o.value : [])]),
    ...Object.entries(spec.subcommands ?? {}).flatMap(([name, s]) => [name, ...(s.args ?? [])]),
  ];
  const bad = words.find((w) => !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(w));
  if (bad !== undefined) throw new Error(`completion: ${JSON.stringify(bad)} is not a plain word`);
}

const allOptions = (spec: CompletionSpec) => [
  ...spec.options,
  ...Object.values(spec.subcommands ?? {}).flatMap((s) => s.options),
];
const flags = (o: CompletionOption) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])];
const functionName = (command: string) => `_${command.replace(/[^A-Za-z0-9]/g, '_')}`;
const words = (options: CompletionOption[]) => options.flatMap(flags).join(' ');

/** Flags that take a value wherever they appear (the words to skip when looking for the subcommand). */
function valueFlags(spec: CompletionSpec): string[] {
  const all = allOptions(spec);
  const valued = new Set(all.filter((o) => o.value).flatMap(flags));
  for (const o of all.filter((o) => !o.value)) for (const f of flags(o)) valued.delete(f);
  return [...valued];
}

/** The case arms that complete an option's value, keyed by "subcommand:flag" (the same -f may be a file in one, a flag in another). */
function bashValueArms(spec: CompletionSpec): string[] {
  const places: Array<[string, CompletionOption[]]> = [
    ['', spec.options],
    ...Object.entries(spec.subcommands ?? {}).map(([name, s]): [string, CompletionOption[]] => [
      name,
      [...spec.options, ...s.options],
    ]),
  ];
  const byHint = new Map<string, { hint: ValueHint; patterns: string[] }>();
  for (const [place, options] of places)
    for (const o of options.filter((o) => o.value)) {
      const key = JSON.stringify(o.value);
      if (!byHint.has(key)) byHint.set(key, { hint: o.value!, patterns: [] });
      byHint.get(key)!.patterns.push(...flags(o).map((f) => `"${place}:${f}"`));
    }
  return [...byHint.values()].map(
    ({ hint, patterns }) => `    ${[...new Set(patterns)].join('|')}) ${bashValue(hint)}; return ;;`,
  );
}

function bashValue(hint: ValueHint): string {
  if (hint === 'file') return 'compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))';
  if (hint === 'dir') return 'compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur"))';
  if (hint === 'text') return 'COMPREPLY=()';
  return `COMPREPLY=($(compgen -W "${hint.join(' ')}" -- "$cur"))`;
}

/** Bash lines that set $cmd to the subcommand: the first word that is neither an option nor an option's value. */
const subcommandLoop = (spec: CompletionSpec) => `  local valued=" ${valueFlags(spec).join(' ')} "
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if ((skip)); then skip=0; continue; fi
    if [[ $valued == *" $w "* ]]; then skip=1; continue; fi
    [[ $w == -* ]] && continue
    cmd=$w
    break
  done
`;

function bashScript(spec: CompletionSpec): string {
  const fn = functionName(spec.command);
  const subcommands = Object.entries(spec.subcommands ?? {});
  const subcommandArm = ([name, s]: [string, { options: CompletionOption[]; args?: readonly string[] }]) =>
    `    ${name}) words="${words(s.options)}"${s.args ? `; [[ $cur == -* ]] || words="${s.args.join(' ')}"` : ''} ;;`;
  return `# bash completion for ${spec.command} (generated from its option table)
${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd="" skip=0 i w words
${subcommands.length === 0 ? '' : subcommandLoop(spec)}  case "$cmd:$prev" in
${bashValueArms(spec).join('\n')}
  esac
${
  subcommands.length === 0
    ? `  words="${words(spec.options)}"`
    : `  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then words="${words(spec.options)}"; else words="${subcommands.map(([n]) => n).join(' ')}"; fi
  else
    case "$cmd" in
${subcommands.map(subcommandArm).join('\n')}
    *) words="" ;;
    esac
  fi`
}
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F ${fn} ${spec.command}
`;
}

function zshOption(o: CompletionOption): string {
  const repeat = o.multiple ? '*' : '';
  const value =
    o.value === undefined
      ? ''
      : o.value === 'file'
        ? `:${o.name}:_files`
        : o.value === 'dir'
          ? `:${o.name}:_files -/`
          : o.value === 'text'
            ? `:${o.name}: `
            : `:${o.name}:(${o.value.join(' ')})`;
  return flags(o)
    .map((f) => `'${repeat}${f}${zshDescription(o.help)}${value}'`)
    .join(' ');
}

function zshScript(spec: CompletionSpec): string {
  const fn = functionName(spec.command);
  const subcommands = Object.entries(spec.subcommands ?? {});
  const top = spec.options.map(zshOption).join(' ');
  const body =
    subcommands.length === 0
      ? `  _arguments -s ${top}`
      : `  local context state state_descr line
  typeset -A opt_args
  _arguments -C ${top} '1:command:(${subcommands.map(([n]) => n).join(' ')})' '*::arg:->args'
  [[ $state == args ]] || return
  case $words[1] in
${subcommands
  .map(
    ([name, s]) =>
      `    ${name}) _arguments ${[...s.options.map(zshOption), ...(s.args ? [`'1:${name}:(${s.args.join(' ')})'`] : [])].join(' ')} ;;`,
  )
  .join('\n')}
  esac`;
  return `#compdef ${spec.command}
# zsh completion for ${spec.command} (generated from its option table)
${fn}() {
${body}
}
if [[ $funcstack[1] == ${fn} ]]; then ${fn} "$@"; else compdef ${fn} ${spec.command}; fi
`;
}

function fishOption(command: string, o: CompletionOption, condition?: string): string {
  const value =
    o.value === undefined
      ? ''
      : o.value === 'file'
        ? ' -r -F'
        : o.value === 'dir'
          ? " -x -a '(__fish_complete_directories)'"
          : o.value === 'text'
            ? ' -x'
            : ` -x -a '${o.value.join(' ')}'`;
  return `complete -c ${command}${condition ? ` -n '${condition}'` : ''} -l ${o.name}${o.short ? ` -s ${o.short}` : ''}${value}${fishDescription(o.help)}`;
}

function fishScript(spec: CompletionSpec): string {
  const c = spec.command;
  const subcommands = Object.entries(spec.subcommands ?? {});
  const lines = [`# fish completion for ${c} (generated from its option table)`, `complete -c ${c} -f`];
  if (subcommands.length > 0)
    lines.push(`complete -c ${c} -n __fish_use_subcommand -a '${subcommands.map(([n]) => n).join(' ')}'`);
  lines.push(...spec.options.map((o) => fishOption(c, o)));
  for (const [name, s] of subcommands) {
    const when = `__fish_seen_subcommand_from ${name}`;
    lines.push(...s.options.map((o) => fishOption(c, o, when)));
    if (s.args) lines.push(`complete -c ${c} -n '${when}' -a '${s.args.join(' ')}'`);
  }
  return lines.join('\n') + '\n';
}
