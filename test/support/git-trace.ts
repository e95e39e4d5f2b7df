import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './files';

/**
 * What `work` returned, the git commands it started, in order, and every git command that ran meanwhile (those
 * git started itself too, e.g. `maintenance` after a fetch), by git's own trace (GIT_TRACE2_EVENT).
 */
export async function gitProgramsDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; commands: string[]; everyCommand: string[] }> {
  const trace = join(tempDir('trace2'), 'events.json');
  process.env.GIT_TRACE2_EVENT = trace;
  try {
    const result = await work();
    const events = existsSync(trace)
      ? readFileSync(trace, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
      : [];
    const names = events.filter((e) => e.event === 'cmd_name');
    return {
      result,
      commands: names.filter((e) => !String(e.hierarchy).includes('/')).map((e) => e.name as string),
      everyCommand: names.map((e) => e.name as string),
    };
  } finally {
    delete process.env.GIT_TRACE2_EVENT;
  }
}
