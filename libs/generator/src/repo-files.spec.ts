import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkWorkingCopy, readRepoFile, readRepoFileIfPresent, repoEntry, withRepoLimits } from './repo-files';

const limits = { maxFileBytes: 100, maxRepoBytes: 1000, maxRepoFiles: 5 };

function repo(files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'repo-files-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

describe('reads of a working copy: no links followed, a cap per file', () => {
  it('reads a regular file, named by its path in the repository when refused', async () => {
    const root = repo({ 'a/ok.yaml': 'x: 1\n', 'a/big.yaml': 'x'.repeat(101) });
    await withRepoLimits(limits, async () => {
      expect(readRepoFile(root, 'a/ok.yaml', 'utf8')).toBe('x: 1\n');
      expect(() => readRepoFile(root, 'a/big.yaml')).toThrow(
        'a/big.yaml: larger than 100 bytes, the limit MAX_REPO_FILE_BYTES sets for a file of a repository; refusing to read it',
      );
    });
    expect(readRepoFile(root, 'a/big.yaml')).toHaveLength(101); // outside a pass: the default limit
  });

  it('refuses a link (to /dev/zero, to a file inside), a device and a FIFO; never reads their targets', () => {
    const root = repo({ 'inside.yaml': 'x: 1\n' });
    symlinkSync('/dev/zero', join(root, 'zero.yaml'));
    symlinkSync('inside.yaml', join(root, 'inner-link.yaml'));
    execFileSync('mkfifo', [join(root, 'fifo.yaml')]);
    expect(() => readRepoFile(root, 'zero.yaml')).toThrow('zero.yaml: a symbolic link, which is never followed');
    expect(() => readRepoFile(root, 'inner-link.yaml')).toThrow('inner-link.yaml: a symbolic link');
    expect(() => readRepoFile(root, 'fifo.yaml')).toThrow('fifo.yaml: not a regular file; refusing to read it');
    expect(() => readRepoFile('/dev', 'zero')).toThrow('zero: not a regular file');
    expect(repoEntry(root, 'zero.yaml')).toBe('link');
    expect(readRepoFileIfPresent(root, 'absent.yaml')).toBeUndefined();
  });

  it('refuses a file below a folder that is a link out of the repository (O_NOFOLLOW sees the last part only)', () => {
    const outside = repo({ 'secret.yaml': 'token: x\n' });
    const root = repo();
    symlinkSync(outside, join(root, 'linked'));
    expect(() => readRepoFile(root, 'linked/secret.yaml')).toThrow(
      'linked/secret.yaml: a folder on its way is a symbolic link out of the repository',
    );
    expect(() => repoEntry(root, 'linked/secret.yaml')).toThrow('linked/secret.yaml');
  });
});

describe('checkWorkingCopy: the limits of a checkout and links out of it', () => {
  it('passes a working copy within the limits (.git not counted)', () => {
    const root = repo({ 'a.yaml': 'x', 'b/c.yaml': 'y', '.git/objects/pack': 'z'.repeat(5000) });
    expect(() => checkWorkingCopy(root, limits)).not.toThrow();
  });

  it('refuses more files than MAX_REPO_FILES and more bytes than MAX_REPO_BYTES, naming the limit', () => {
    const many = repo(Object.fromEntries([...Array(6).keys()].map((i) => [`f${i}`, 'x'])));
    expect(() => checkWorkingCopy(many, limits)).toThrow(
      'the repository holds more than 5 files, the limit MAX_REPO_FILES sets; refusing to read it',
    );
    const large = repo({ 'a/b': 'x'.repeat(600), 'c/d': 'y'.repeat(600) });
    expect(() => checkWorkingCopy(large, limits)).toThrow(
      'the repository holds more than 1000 bytes unpacked, the limit MAX_REPO_BYTES sets',
    );
  });

  it('refuses links that lead out of the working copy, naming each; a link inside is fine', () => {
    const root = repo({ 'clusters/a/in.yaml': 'x' });
    symlinkSync('in.yaml', join(root, 'clusters/a/inner.yaml'));
    expect(() => checkWorkingCopy(root, limits)).not.toThrow();
    symlinkSync('/proc/self/environ', join(root, 'clusters/a/environ.yaml'));
    symlinkSync('../../..', join(root, 'clusters/a/up'));
    expect(() => checkWorkingCopy(root, limits)).toThrow(
      'the working copy has links that lead out of it, which are never read or written through: clusters/a/environ.yaml, clusters/a/up',
    );
  });
});
