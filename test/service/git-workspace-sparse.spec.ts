import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckoutScope, GitAccess, GitWorkspace, RepositoryCache } from '#libs/git';
import { allFiles, tempDir } from '../support/files';
import { gitProgramsDuring } from '../support/git-trace';
import { bareRepo, gitLog, pushAsAnotherWriter } from '../support/services';

const identity = { name: 'test', email: 'test@example.com' };

describe('sparse working copies (cone mode, the folders a scope chooses)', () => {
  /** A fleet: a shared folder, two clusters' folders, a file above them. */
  function fleet() {
    const remote = bareRepo();
    pushAsAnotherWriter(
      remote.dir,
      {
        'base/app.yaml': 'app: 1\n',
        'clusters/kustomization.yaml': 'resources: []\n',
        'clusters/apple/a.yaml': 'apple: 1\n',
        'clusters/pear/p.yaml': 'pear: 1\n',
      },
      'fleet',
    );
    return remote;
  }
  const mine = () => ['base', 'clusters/kiwi'];
  const seen: string[][] = [];
  const scope = (files: string[]) => (seen.push(files), mine());
  const sparseClone = (remote: { url: string }, name: string, cache?: RepositoryCache, chosen: CheckoutScope = scope) =>
    GitWorkspace.clone(
      join(tempDir('ws'), name),
      { url: remote.url, branch: 'main' },
      identity,
      GitAccess.NONE,
      cache,
      undefined,
      chosen,
    );
  const show = (gitDir: string, path: string) =>
    execFileSync('git', ['--git-dir', gitDir, 'show', `main:${path}`], { encoding: 'utf8' });

  it("has only the cone's files on disk (and the files above it), chosen from the branch's file list", async () => {
    const remote = fleet();
    const ws = await sparseClone(remote, 'k', new RepositoryCache(tempDir('repo-cache')));
    expect(ws.sparse).toBe(true);
    expect(seen.at(-1)).toEqual(expect.arrayContaining(['README.md', 'base/app.yaml', 'clusters/pear/p.yaml']));
    expect(allFiles(ws.dir).sort()).toEqual(['README.md', 'base/app.yaml', 'clusters/kustomization.yaml']);
    const full = await sparseClone(remote, 'full', undefined, () => null);
    expect(full.sparse).toBe(false);
    expect(allFiles(full.dir)).toHaveLength(5);
  });

  it('with a cache, lists the files in the cache and clones the cone in one git: no sparse-checkout, no set-url, pushes reach the remote', async () => {
    const remote = fleet();
    const cache = new RepositoryCache(tempDir('repo-cache'));
    await sparseClone(remote, 'warm', cache);
    const started = await gitProgramsDuring(() => sparseClone(remote, 'c1', cache));
    const ws = started.result;
    expect(started.commands).toEqual(['fetch', 'ls-tree', 'clone']);
    expect(allFiles(ws.dir).sort()).toEqual(['README.md', 'base/app.yaml', 'clusters/kustomization.yaml']);
    expect(execFileSync('git', ['-C', ws.dir, 'sparse-checkout', 'list'], { encoding: 'utf8' })).toBe(
      'base\nclusters/kiwi\n',
    );
    // A sparse index: the folders left out are one entry each.
    expect(execFileSync('git', ['-C', ws.dir, 'ls-files', '--sparse'], { encoding: 'utf8' })).toContain(
      'clusters/pear/\n',
    );
    expect(readdirSync(join(ws.dir, '..'))).toEqual(['c1']); // the clone's template is gone
    mkdirSync(join(ws.dir, 'clusters/kiwi'));
    writeFileSync(join(ws.dir, 'clusters/kiwi/k.yaml'), 'kiwi: 1\n');
    const sha = await ws.commit(['clusters/kiwi'], 'scaffold(kiwi): infra pass', 'run-c1', 'infra');
    await ws.push();
    expect(gitLog(remote.dir)[0]).toBe(`${sha} scaffold(kiwi): infra pass`);
    expect(await ws.remoteHead()).toBe(sha);
  });

  it("chooses the cone again from the clone's own files when another fetch moved the cache between the listing and the clone", async () => {
    const remote = fleet();
    const root = tempDir('repo-cache');
    const cache = new RepositoryCache(root);
    await sparseClone(remote, 'warm2', cache);
    let theirs = '';
    const choices: string[][] = [];
    const movingScope = (files: string[]) => {
      choices.push(files);
      if (choices.length === 1) {
        theirs = pushAsAnotherWriter(remote.dir, { 'clusters/plum/p.yaml': 'plum: 1\n' }, 'plum');
        const [cacheDir] = readdirSync(root);
        execFileSync('git', ['-C', join(root, cacheDir), 'fetch', '-q', 'origin', '+refs/heads/main:refs/heads/main']);
      }
      return mine();
    };
    const ws = await sparseClone(remote, 'moved', cache, movingScope);
    expect(await ws.head()).toBe(theirs);
    expect(choices).toHaveLength(2);
    expect(choices[0]).not.toContain('clusters/plum/p.yaml');
    expect(choices[1]).toContain('clusters/plum/p.yaml');
    expect(allFiles(ws.dir).sort()).toEqual(['README.md', 'base/app.yaml', 'clusters/kustomization.yaml']);
    expect(await ws.isClean()).toBe(true);
  });

  it('leaves a cone with folder names git escapes to git sparse-checkout, after the clone', async () => {
    const remote = fleet();
    pushAsAnotherWriter(remote.dir, { 'odd name/o.yaml': 'o: 1\n' }, 'odd');
    const cache = new RepositoryCache(tempDir('repo-cache'));
    const started = await gitProgramsDuring(() =>
      sparseClone(remote, 'odd', cache, () => ['odd name', 'clusters/kiwi']),
    );
    expect(started.commands).toEqual(['clone', 'ls-tree', 'clone', 'sparse-checkout']);
    expect(allFiles(started.result.dir).sort()).toEqual([
      'README.md',
      'clusters/kustomization.yaml',
      'odd name/o.yaml',
    ]);
  });

  it('commits a new folder outside the cone and leaves the folders it did not check out as they were on the remote', async () => {
    const remote = fleet();
    const ws = await sparseClone(remote, 'l');
    mkdirSync(join(ws.dir, 'clusters/kiwi'), { recursive: true });
    mkdirSync(join(ws.dir, 'shared'), { recursive: true });
    writeFileSync(join(ws.dir, 'clusters/kiwi/k.yaml'), 'kiwi: 1\n');
    writeFileSync(join(ws.dir, 'shared/s.yaml'), 's: 1\n');
    expect(await ws.stage(['clusters/kiwi', 'shared'])).toBe(2);
    expect(await ws.stage(['clusters/kiwi', 'shared'])).toBe(0);
    await ws.commitStaged('scaffold(kiwi): infra pass', 'run-9', 'infra');
    // A path git will not add (not there, or ignored) is no change when nothing else changed, and git's refusal when something did.
    writeFileSync(join(ws.dir, '.gitignore'), 'ignored.yaml\n');
    writeFileSync(join(ws.dir, 'ignored.yaml'), 'i: 1\n');
    expect(await ws.stage(['clusters/kiwi', 'not-there', 'ignored.yaml'])).toBe(0);
    writeFileSync(join(ws.dir, 'clusters/kiwi/k2.yaml'), 'kiwi: 2\n');
    await expect(ws.stage(['clusters/kiwi', 'not-there'])).rejects.toThrow(/did not match any files/);
    rmSync(join(ws.dir, 'clusters/kiwi/k2.yaml'));
    await ws.push();
    expect(show(remote.dir, 'clusters/kiwi/k.yaml')).toBe('kiwi: 1\n');
    expect(show(remote.dir, 'shared/s.yaml')).toBe('s: 1\n');
    expect(show(remote.dir, 'clusters/apple/a.yaml')).toBe('apple: 1\n');
    expect(show(remote.dir, 'clusters/pear/p.yaml')).toBe('pear: 1\n');
    expect(await ws.findRunCommit('run-9', 'infra')).toBe(await ws.head());
    // The folder the pass wrote outside the cone is in it now: a reset keeps it on disk.
    await ws.fetch();
    await ws.resetToRemote();
    expect(existsSync(join(ws.dir, 'shared/s.yaml'))).toBe(true);
    expect(existsSync(join(ws.dir, 'clusters/pear'))).toBe(false);
  });

  it('widens the cone only for folders outside it: a commit inside starts no sparse-checkout', async () => {
    const remote = fleet();
    const ws = await sparseClone(remote, 'w');
    const write = (path: string, text: string) => {
      mkdirSync(join(ws.dir, path, '..'), { recursive: true });
      writeFileSync(join(ws.dir, path), text);
    };
    write('clusters/kiwi/deep/k.yaml', 'kiwi: 1\n');
    write('base/b.yaml', 'b: 1\n');
    const inside = await gitProgramsDuring(() =>
      ws.commit(['clusters/kiwi', 'base/b.yaml'], 'scaffold(kiwi): infra pass', 'run-w', 'infra'),
    );
    expect(inside.commands).toEqual(['add', 'commit']);
    write('shared/s.yaml', 's: 1\n');
    write('clusters/kiwi/k2.yaml', 'kiwi: 2\n');
    const outside = await gitProgramsDuring(() =>
      ws.commit(['shared/s.yaml', 'clusters/kiwi'], 'scaffold(kiwi): full pass', 'run-w', 'full'),
    );
    expect(outside.commands).toEqual(['sparse-checkout', 'add', 'commit']);
    write('shared/t.yaml', 't: 1\n');
    const widened = await gitProgramsDuring(() => ws.commit(['shared'], 'scaffold(kiwi): again', 'run-w2', 'full'));
    expect(widened.commands).toEqual(['add', 'commit']);
    await ws.push();
    expect(show(remote.dir, 'clusters/kiwi/deep/k.yaml')).toBe('kiwi: 1\n');
    expect(show(remote.dir, 'base/b.yaml')).toBe('b: 1\n');
    expect(show(remote.dir, 'shared/t.yaml')).toBe('t: 1\n');
    expect(show(remote.dir, 'clusters/pear/p.yaml')).toBe('pear: 1\n');
  });

  it('rebases onto changes outside and inside the cone that do not touch its files, and pushes', async () => {
    const remote = fleet();
    const ws = await sparseClone(remote, 'm');
    pushAsAnotherWriter(
      remote.dir,
      { 'clusters/pear/p.yaml': 'pear: 2\n', 'clusters/plum/q.yaml': 'plum: 1\n', 'base/other.yaml': 'other: 1\n' },
      'others',
    );
    mkdirSync(join(ws.dir, 'clusters/kiwi'), { recursive: true });
    writeFileSync(join(ws.dir, 'clusters/kiwi/k.yaml'), 'kiwi: 1\n');
    writeFileSync(join(ws.dir, 'base/app.yaml'), 'app: 2\n');
    await ws.commit(['clusters/kiwi', 'base'], 'scaffold(kiwi): infra pass', 'run-10', 'infra');
    expect(await ws.push().catch((e) => e.message)).toMatch(/push rejected/);
    await ws.fetch();
    expect(await ws.rebaseOnRemote()).toBe(true);
    await ws.push();
    expect(gitLog(remote.dir).map((l) => l.split(' ').slice(1).join(' '))).toEqual([
      'scaffold(kiwi): infra pass',
      'others',
      'fleet',
      'seed',
    ]);
    expect(show(remote.dir, 'clusters/pear/p.yaml')).toBe('pear: 2\n');
    expect(show(remote.dir, 'clusters/plum/q.yaml')).toBe('plum: 1\n');
    expect(show(remote.dir, 'base/app.yaml')).toBe('app: 2\n');
    expect(readFileSync(join(ws.dir, 'base/other.yaml'), 'utf8')).toBe('other: 1\n');
    expect(existsSync(join(ws.dir, 'clusters/plum'))).toBe(false);
  });

  it("leaves the working copy as it was when the rebase conflicts inside the cone, then moves onto the remote's head", async () => {
    const remote = fleet();
    const ws = await sparseClone(remote, 'n');
    const theirs = pushAsAnotherWriter(
      remote.dir,
      { 'base/app.yaml': 'app: theirs\n', 'clusters/pear/p.yaml': 'pear: 3\n' },
      'theirs',
    );
    writeFileSync(join(ws.dir, 'base/app.yaml'), 'app: ours\n');
    const ours = await ws.commit(['base'], 'scaffold(kiwi): full pass', 'run-11', 'full');
    expect(await ws.push().catch((e) => e.message)).toMatch(/push rejected/);
    await ws.fetch();
    expect(await ws.rebaseOnRemote()).toBe(false);
    expect(await ws.head()).toBe(ours);
    expect(readFileSync(join(ws.dir, 'base/app.yaml'), 'utf8')).toBe('app: ours\n');
    await ws.resetToRemote();
    expect(await ws.head()).toBe(theirs);
    expect(readFileSync(join(ws.dir, 'base/app.yaml'), 'utf8')).toBe('app: theirs\n');
    expect(allFiles(ws.dir).sort()).toEqual(['README.md', 'base/app.yaml', 'clusters/kustomization.yaml']);
  });
});
