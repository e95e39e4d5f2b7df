/**
 * The programs the suite starts by name, installed by npm test's pretest (scripts/ensure-services.sh):
 * one missing fails here, naming it and the command that installs it, and fails every test that starts
 * it the same way; no test skips itself for want of one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { requiredTool, TOOLS_SETUP } from '../support/tools';

const root = join(__dirname, '../..');
const SETUP_SCRIPT = readFileSync(join(root, 'scripts/ensure-services.sh'), 'utf8');
const KUBECTL_PINNED = /^KUBECTL_PINNED=(v[\d.]+)$/m.exec(SETUP_SCRIPT)?.[1];

function specFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return specFiles(path);
    return name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('the programs the tests start', () => {
  it.each(['kubectl', 'helm', 'promtool', 'age', 'age-keygen', 'zsh', 'fish', 'chromium'])('has %s', (program) => {
    expect(SETUP_SCRIPT).toMatch(new RegExp(`\\b${program}\\b`));
    expect(requiredTool(program)).toMatch(new RegExp(`/${program}$`));
  });

  it('finds the pinned kubectl first, the one validation builds with', () => {
    expect(KUBECTL_PINNED).toBeDefined();
    const version = execFileSync(requiredTool('kubectl'), ['version', '--client'], { encoding: 'utf8' });
    expect(version).toContain(`Client Version: ${KUBECTL_PINNED}\n`);
  });

  it('names a missing program and the command that installs it', () => {
    const saved = process.env.PATH;
    process.env.PATH = mkdtempSync(join(tmpdir(), 'no-tools-'));
    try {
      expect(() => requiredTool('helm')).toThrow(
        `helm is not installed (not on PATH nor in .tools/bin): ${TOOLS_SETUP} installs it`,
      );
    } finally {
      process.env.PATH = saved;
    }
  });

  it('is never a reason to skip a test', () => {
    const skipping = ['libs', 'src', 'test']
      .flatMap((dir) => specFiles(join(root, dir)))
      .filter((file) => /\b(it|test|describe)\.skip\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(skipping).toEqual([]);
  });
});
