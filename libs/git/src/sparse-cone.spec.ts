import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conePatternFile } from './sparse-cone';

/** What git itself writes for `git sparse-checkout set --cone <folders>`. */
function writtenByGit(folders: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'gs-cone-'));
  try {
    const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe' });
    git('init', '-q');
    git('sparse-checkout', 'set', '--cone', '--end-of-options', ...folders);
    return readFileSync(join(dir, '.git/info/sparse-checkout'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the cone file a clone brings in (conePatternFile)', () => {
  it.each([
    [['clusters/kiwi']],
    [['base', 'clusters/kiwi', 'clusters/kustomization-folder']],
    [['apps/base/podinfo', 'apps/kiwi', 'infrastructure', 'clusters/kiwi/flux-system', '.github']],
    [['a/b/c/d', 'a/b', 'a/x', 'z']],
    [['kiwi-2.eu_west@1', 'x=y,z+w', 'Apps/Z', 'apps/a', 'apps-b/c', 'apps.d/e', 'apps_f/g']],
    [[]],
  ])('is byte for byte what git writes for %j', (folders) => {
    expect(conePatternFile(folders)).toBe(writtenByGit(folders));
  });

  it('leaves folders git would escape or refuse to git', () => {
    for (const odd of ['with space', 'star*', 'q?', 'br[a]ce', 'back\\slash', 'a//b', '/abs', 'a/', '..', 'a/./b', ''])
      expect(conePatternFile(['base', odd])).toBeNull();
  });
});
