/**
 * The README's npm and npx calls, run as a user runs them: by npm on the machine's own Node (not the
 * pinned one npm puts first on a script's PATH), print no EBADENGINE warning. npm checks packages'
 * engines against the Node it runs on; scripts/npm-ci.sh runs npm ci on the pinned Node, and the
 * project declares no engines of its own for npx to check against the machine's.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

jest.setTimeout(120_000);

const root = join(__dirname, '../..');

/** PATH as the user's shell has it: without the folders npm and jest put first (the pinned Node, .tools/bin). */
const MACHINE_PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.includes('node_modules') && !dir.endsWith('.tools/bin'))
  .join(delimiter);

/** A command as a user types it, with npm's cache in a folder of its own when given: all it printed. */
function typed(command: string, cwd: string, npmCache?: string): string {
  // npm sets npm_* for the script running jest; a user's shell has none of them.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  env.PATH = MACHINE_PATH;
  if (npmCache) env.npm_config_cache = npmCache;
  const r = spawnSync('bash', ['-c', command], { cwd, env, encoding: 'utf8' });
  expect({ command, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
    command,
    status: 0,
    stderr: '',
  });
  return r.stdout + r.stderr;
}

const warnings = (output: string) => output.split('\n').filter((line) => line.includes('EBADENGINE'));

describe('npm and npx as the README calls them', () => {
  it('npm ci (scripts/npm-ci.sh) warns of no engine', () => {
    // The lockfile's tree checked, nothing downloaded or run: a copy of what npm ci reads, in a folder of its own.
    const copy = mkdtempSync(join(tmpdir(), 'npm-ci-'));
    mkdirSync(join(copy, 'scripts'));
    for (const file of ['package.json', 'package-lock.json', 'scripts/lib.sh', 'scripts/npm-ci.sh'])
      copyFileSync(join(root, file), join(copy, file));
    const output = typed('bash scripts/npm-ci.sh --dry-run --offline --ignore-scripts', copy);
    expect(output).toMatch(/added \d+ packages/);
    expect(warnings(output)).toEqual([]);
  });

  /** Every program the README starts with npx, started with --help. */
  const readmeNpx = [...new Set(readFileSync(join(root, 'README.md'), 'utf8').match(/\bnpx [\w-]+/g))].map(
    (command) => `${command} --help`,
  );

  it("finds the README's npx calls", () => expect(readmeNpx.length).toBeGreaterThan(0));

  it.each(['npm test --help', 'npm run node-version', ...readmeNpx])('%s warns of no engine', (command) => {
    // A fresh npm cache: npx builds its tree of the project once per cache, and checks engines then.
    const output = typed(command, root, mkdtempSync(join(tmpdir(), 'npm-cache-')));
    expect(warnings(output)).toEqual([]);
  });
});
