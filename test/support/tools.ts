import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What installs every program the suite starts; npm test's pretest runs it. */
export const TOOLS_SETUP = 'bash scripts/ensure-services.sh';

/**
 * A program a test starts, found on PATH (jest.config.js puts the checkout's .tools/bin first): its
 * absolute path. A missing one fails the test naming the program and the command that installs it,
 * rather than a bare `spawn helm ENOENT` or a skipped test.
 */
export function requiredTool(program: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this folder
    }
  }
  throw new Error(`${program} is not installed (not on PATH nor in .tools/bin): ${TOOLS_SETUP} installs it`);
}
