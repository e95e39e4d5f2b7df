import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/files';
import { canonicalReferenceEnv, environmentName, newClusterDir, referenceEnvDir } from './environment-folder';
import { GeneratorInputError } from './errors';

describe('where a reference environment lies and where the new cluster goes', () => {
  const root = tempDir('env-folder');
  for (const dir of ['clusters/dev', 'kubernetes/main', 'single']) mkdirSync(join(root, dir), { recursive: true });

  it('reads a name under clusters/, a folder, and a bare name of a top-level folder', () => {
    expect(referenceEnvDir(root, 'dev')).toBe('clusters/dev');
    expect(referenceEnvDir(root, 'kubernetes/main')).toBe('kubernetes/main');
    expect(referenceEnvDir(root, 'single')).toBe('single');
    // Neither exists: the message about clusters/ stays the one a user of Flux's layout expects.
    expect(referenceEnvDir(root, 'staging')).toBe('clusters/staging');
    expect(canonicalReferenceEnv('clusters/dev')).toBe('dev');
    expect(canonicalReferenceEnv('clusters/dev/flux')).toBe('clusters/dev/flux');
  });

  it('names the environment for comments, except a single-cluster folder', () => {
    expect(environmentName('kubernetes/main')).toBe('main');
    expect(environmentName('kubernetes')).toBeUndefined();
  });

  const same = { separate: false, holdsEnvDir: true, ownedHere: false };
  const emptyRepo = { separate: true, holdsEnvDir: false, ownedHere: false };
  it.each([
    ['clusters/dev', emptyRepo, 'clusters/acme'],
    ['clusters/dev', same, 'clusters/acme'],
    ['kubernetes/main', same, 'kubernetes/acme'],
    ['kubernetes/main', emptyRepo, 'kubernetes/main'],
    ['kubernetes/main', { separate: true, holdsEnvDir: true, ownedHere: true }, 'kubernetes/main'],
    ['kubernetes/main', { separate: true, holdsEnvDir: true, ownedHere: false }, 'kubernetes/acme'],
    ['kubernetes', emptyRepo, 'kubernetes'],
  ])('%s into %j -> %s', (envDir, target, expected) => {
    expect(newClusterDir(envDir, 'acme', target)).toBe(expected);
  });

  it('refuses a single-cluster reference into its own repository, saying what to give', () => {
    expect(() => newClusterDir('kubernetes', 'acme', same)).toThrow(GeneratorInputError);
    expect(() => newClusterDir('kubernetes', 'acme', same)).toThrow(/give --repo another repository/);
  });
});
