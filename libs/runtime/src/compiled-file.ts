import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A compiled script a thread or process is started from: beside the calling module in dist/, or
 * dist/'s copy when running from the TypeScript sources (tests).
 * @param here the caller's __dirname
 * @param fromRoot the script's path in the repository, e.g. libs/git/src/helper-main.js
 */
export function compiledFile(here: string, fromRoot: string): string {
  const beside = join(here, fromRoot.split('/').at(-1)!);
  if (existsSync(beside)) return beside;
  let root = here;
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  const built = join(root, 'dist', fromRoot);
  if (!existsSync(built)) throw new Error(`${fromRoot} is not built (${built}): run npm run build`);
  return built;
}
