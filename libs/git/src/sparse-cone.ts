/**
 * The `info/sparse-checkout` file git writes for `git sparse-checkout set --cone <folders>`, so that a
 * clone can check out the cone itself (the file comes in through the clone's template) instead of
 * checking out the top and then starting `git sparse-checkout set`. Null when a folder holds a
 * character git would escape in a pattern, or a name git would refuse in a cone: then git writes it.
 */
export function conePatternFile(folders: string[]): string | null {
  if (!folders.every(isPlainFolder)) return null;
  // A folder inside another of the cone adds nothing (git drops it too).
  const recursive = [...new Set(folders)].filter((f) => !folders.some((other) => f.startsWith(`${other}/`)));
  const parents = new Set(recursive.flatMap(ancestors));
  const lines = ['/*', '!/*/'];
  for (const parent of [...parents].sort()) lines.push(`/${parent}/`, `!/${parent}/*/`);
  for (const folder of recursive.sort()) lines.push(`/${folder}/`);
  return `${lines.join('\n')}\n`;
}

/** Path parts of letters, digits and `._@+=,-` only, none of them `.` or `..` (nor empty: no leading, trailing or double `/`). */
const isPlainFolder = (folder: string) =>
  folder.split('/').every((part) => /^[\w.@+=,-]+$/.test(part) && part !== '.' && part !== '..');

/** `a/b/c` → `a`, `a/b`. */
const ancestors = (folder: string) =>
  folder
    .split('/')
    .slice(0, -1)
    .map((_, i, parts) => parts.slice(0, i + 1).join('/'));
