import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The packages these commands ship in: the repository's, and scaffolderctl's own (scripts/pack-scaffolderctl.js). */
const PACKAGE_NAMES = new Set(['gitops-scaffolder', 'scaffolderctl']);

/** The package's version, read from package.json (from src/ under ts-jest, from dist/src/ when built). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (PACKAGE_NAMES.has(pkg.name)) return pkg.version;
    } catch {
      // not here: look one folder up
    }
  }
  return '0.0.0';
}

export const VERSION = packageVersion();

/** What `--version` prints in every command of the package: `<command> <version>`. */
export const versionLine = (command: string) => `${command} ${VERSION}`;
