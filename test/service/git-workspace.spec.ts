import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { GitAccess, GitStepError, GitWorkspace, LocalGitWorkspaces, RepositoryCache } from '#libs/git';
import type { HelperProcess } from '#libs/git';
import { tempDir } from '../support/files';
import { gitProgramsDuring } from '../support/git-trace';
import { bareRepo, gitLog, pushAsAnotherWriter } from '../support/services';

const identity = { name: 'test', email: 'test@example.com' };

/** `count` blobs written loose into a bare repository's objects/17 (their ids start with 17), as git writes them. */
function writeLooseObjectsIn17(gitDir: string, count: number, skip = 0) {
  let found = 0;
  for (let i = 0; found < skip + count; i++) {
    const content = `loose ${i}\n`;
    const object = Buffer.concat([Buffer.from(`blob ${Buffer.byteLength(content)}\0`), Buffer.from(content)]);
    const id = createHash('sha1').update(object).digest('hex');
    if (!id.startsWith('17')) continue;
    if (found++ < skip) continue;
    mkdirSync(join(gitDir, 'objects', '17'), { recursive: true });
    writeFileSync(join(gitDir, 'objects', '17', id.slice(2)), deflateSync(object));
  }
}

describe('git workspace (real git, local bare remote)', () => {
  it('finds a run commit by its trailers, so a redelivered step does not push again', async () => {
    const remote = bareRepo();
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'a'), { url: remote.url, branch: 'main' }, identity);
    writeFileSync(join(ws.dir, 'x.yaml'), 'a: 1\n');
    const sha = await ws.commit(['x.yaml'], 'scaffold: infra', 'run-1', 'infra');
    await ws.push();
    const again = await GitWorkspace.clone(join(tempDir('ws'), 'b'), { url: remote.url, branch: 'main' }, identity);
    expect(await again.findRunCommit('run-1', 'infra')).toBe(sha);
    expect(await again.findRunCommit('run-1', 'full')).toBeNull();
    expect(await again.findRunCommit('run-2', 'infra')).toBeNull();
  });

  it('classifies a push rejected because the branch moved as retryable, then lands on the new head', async () => {
    const remote = bareRepo();
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'c'), { url: remote.url, branch: 'main' }, identity);
    pushAsAnotherWriter(remote.dir, { 'other.txt': 'x' }, 'moved');
    writeFileSync(join(ws.dir, 'mine.yaml'), 'a: 1\n');
    await ws.commit(['mine.yaml'], 'scaffold: infra', 'run-3', 'infra');
    const rejected = await ws.push().catch((e) => e);
    expect(rejected).toBeInstanceOf(GitStepError);
    expect(rejected.retryable).toBe(true);
    expect(rejected.message).toMatch(/push rejected/);
    await ws.fetch();
    expect(await ws.findRunCommit('run-3', 'infra', 'remote')).toBeNull();
    expect(await ws.rebaseOnRemote()).toBe(true);
    await ws.push();
    expect(gitLog(remote.dir).map((l) => l.split(' ').slice(1).join(' '))).toEqual([
      'scaffold: infra',
      'moved',
      'seed',
    ]);
    expect(await ws.findRunCommit('run-3', 'infra')).toBe(await ws.head());
  });

  it('leaves the working copy as it was when the rebase conflicts, and can then move onto the remote head', async () => {
    const remote = bareRepo();
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'd'), { url: remote.url, branch: 'main' }, identity);
    const theirs = pushAsAnotherWriter(remote.dir, { 'shared.yaml': 'owner: them\n' }, 'theirs');
    writeFileSync(join(ws.dir, 'shared.yaml'), 'owner: us\n');
    const ours = await ws.commit(['shared.yaml'], 'scaffold: full', 'run-4', 'full');
    expect(await ws.push().catch((e) => e.message)).toMatch(/push rejected/);
    await ws.fetch();
    expect(await ws.rebaseOnRemote()).toBe(false);
    expect(await ws.head()).toBe(ours);
    expect(readFileSync(join(ws.dir, 'shared.yaml'), 'utf8')).toBe('owner: us\n');
    await ws.resetToRemote();
    expect(await ws.head()).toBe(theirs);
    expect(readFileSync(join(ws.dir, 'shared.yaml'), 'utf8')).toBe('owner: them\n');
  });

  it('follows the remote branch on fetch even where it was rewritten', async () => {
    const remote = bareRepo();
    pushAsAnotherWriter(remote.dir, { 'a.txt': 'a\n' }, 'a');
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'rw'), { url: remote.url, branch: 'main' }, identity);
    execFileSync('git', ['--git-dir', remote.dir, 'update-ref', 'refs/heads/main', 'main~1']);
    const rewritten = pushAsAnotherWriter(remote.dir, { 'b.txt': 'b\n' }, 'rewritten');
    await ws.fetch();
    const tracking = execFileSync('git', ['-C', ws.dir, 'rev-parse', 'refs/remotes/origin/main'], { encoding: 'utf8' });
    expect(tracking.trim()).toBe(rewritten);
  });

  it('finds a commit of the run that another attempt pushed while this one was working', async () => {
    const remote = bareRepo();
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'e'), { url: remote.url, branch: 'main' }, identity);
    const landed = pushAsAnotherWriter(
      remote.dir,
      { 'clusters/c/a.yaml': 'a: 1\n' },
      'scaffold: infra\n\nScaffold-Run: run-5\nScaffold-Pass: infra',
    );
    await ws.fetch();
    expect(await ws.findRunCommit('run-5', 'infra', 'remote')).toBe(landed);
    expect(await ws.findRunCommit('run-5', 'infra')).toBeNull();
  });

  it("runs git under nice when asked, so the API keeps its core (the remote's hook reports the niceness it inherited)", async () => {
    const remote = bareRepo();
    const report = join(tempDir('nice'), 'niceness');
    const hook = join(remote.dir, 'hooks', 'pre-receive');
    // Field 19 of /proc/<pid>/stat is the process's nice value; the hook runs under git receive-pack, under our git push.
    writeFileSync(hook, `#!/bin/sh\ncut -d' ' -f19 /proc/$$/stat > '${report}'\n`, { mode: 0o755 });
    const pushWith = async (access: GitAccess, name: string) => {
      const ws = await GitWorkspace.clone(
        join(tempDir('ws'), name),
        { url: remote.url, branch: 'main' },
        identity,
        access,
      );
      writeFileSync(join(ws.dir, `${name}.yaml`), 'a: 1\n');
      await ws.commit([`${name}.yaml`], `scaffold: ${name}`, name, 'infra');
      await ws.push();
      return Number(readFileSync(report, 'utf8').trim());
    };
    const own = getPriority();
    expect(await pushWith(GitAccess.prepare({ credentialsHosts: [], lowPriority: true }), 'niced')).toBe(
      Math.min(19, own + 10),
    );
    expect(await pushWith(GitAccess.prepare({ credentialsHosts: [] }), 'plain')).toBe(own);
  });

  it('makes working copies from a cache brought up to date per clone, borrowing its objects and pushing to the remote', async () => {
    const remote = bareRepo();
    const root = tempDir('repo-cache');
    const cache = new RepositoryCache(root);
    const first = await GitWorkspace.clone(
      join(tempDir('ws'), 'f'),
      { url: remote.url, branch: 'main' },
      identity,
      GitAccess.NONE,
      cache,
    );
    expect(readFileSync(join(first.dir, '.git/objects/info/alternates'), 'utf8')).toContain(root);
    writeFileSync(join(first.dir, 'first.yaml'), 'a: 1\n');
    const pushed = await first.commit(['first.yaml'], 'scaffold: first', 'run-6', 'infra');
    await first.push();
    expect(gitLog(remote.dir)[0]).toBe(`${pushed} scaffold: first`);
    // The cache learns of commits made elsewhere before the next working copy is made.
    const theirs = pushAsAnotherWriter(remote.dir, { 'theirs.txt': 'x' }, 'theirs');
    const second = await GitWorkspace.clone(
      join(tempDir('ws'), 'g'),
      { url: remote.url, branch: 'main' },
      identity,
      GitAccess.NONE,
      cache,
    );
    expect(await second.head()).toBe(theirs);
    expect(await second.findRunCommit('run-6', 'infra')).toBe(pushed);
    expect(readdirSync(root)).toHaveLength(1);
  });

  it('reads HEAD from the ref files git wrote, loose or packed, and asks git when HEAD is on another branch', async () => {
    const remote = bareRepo();
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'rf'), { url: remote.url, branch: 'main' }, identity);
    writeFileSync(join(ws.dir, 'rf.yaml'), 'a: 1\n');
    const started = await gitProgramsDuring(() => ws.commit(['rf.yaml'], 'scaffold: rf', 'run-rf', 'infra'));
    const sha = started.result;
    expect(sha).toBe(execFileSync('git', ['-C', ws.dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
    expect(started.everyCommand).toEqual(['add', 'commit']); // no rev-parse, and no maintenance after the commit
    execFileSync('git', ['-C', ws.dir, 'pack-refs', '--all']);
    expect(existsSync(join(ws.dir, '.git/refs/heads/main'))).toBe(false);
    const packed = await gitProgramsDuring(() => ws.head());
    expect([packed.result, packed.everyCommand]).toEqual([sha, []]);
    execFileSync('git', ['-C', ws.dir, 'checkout', '-q', '--detach']);
    const detached = await gitProgramsDuring(() => ws.head());
    expect([detached.result, detached.everyCommand]).toEqual([sha, []]);
    execFileSync('git', ['-C', ws.dir, 'checkout', '-q', '-b', 'elsewhere']);
    const otherBranch = await gitProgramsDuring(() => ws.head());
    expect([otherBranch.result, otherBranch.everyCommand]).toEqual([sha, ['rev-parse']]);
  });

  it('starts no git maintenance in a working copy, nor in the cache until its loose objects pile up', async () => {
    const remote = bareRepo();
    const root = tempDir('repo-cache');
    const cache = new RepositoryCache(root);
    const repo = { url: remote.url, branch: 'main' };
    const first = await GitWorkspace.clone(join(tempDir('ws'), 'm1'), repo, identity, GitAccess.NONE, cache);
    pushAsAnotherWriter(remote.dir, { 'theirs.txt': 'x' }, 'theirs');
    const quiet = await gitProgramsDuring(async () => {
      await first.fetch();
      await cache.refresh(repo);
    });
    expect(quiet.commands).toEqual(['fetch', 'fetch']);
    expect(quiet.everyCommand).not.toContain('maintenance');
    expect(quiet.everyCommand).not.toContain('gc');
    // git samples the loose objects of objects/17 and starts maintenance past 27 there (gc.auto's 6,700 over 256).
    // 26, not 27: the fetch below may unpack one of its own objects into 17/ (their ids change with the time).
    const [cacheDir] = readdirSync(root);
    writeLooseObjectsIn17(join(root, cacheDir), 26);
    pushAsAnotherWriter(remote.dir, { 'more.txt': 'y' }, 'more');
    const notYet = await gitProgramsDuring(() => cache.refresh(repo));
    expect([notYet.commands, notYet.everyCommand]).toEqual([['fetch'], expect.not.arrayContaining(['maintenance'])]);
    const looseIn17 = readdirSync(join(root, cacheDir, 'objects', '17')).length;
    writeLooseObjectsIn17(join(root, cacheDir), 28 - looseIn17, 26);
    const due = await gitProgramsDuring(() => cache.refresh(repo));
    expect(due.commands).toEqual(['fetch', 'maintenance']);
    expect(due.everyCommand).toContain('gc');
  });

  it('leaves no cache behind when the remote cannot be cloned, and says why as without one', async () => {
    const root = tempDir('repo-cache');
    const missing = await GitWorkspace.clone(
      tempDir('ws'),
      { url: 'file:///nonexistent/repo.git', branch: 'main' },
      identity,
      GitAccess.NONE,
      new RepositoryCache(root),
    ).catch((e) => e);
    expect(missing).toBeInstanceOf(GitStepError);
    expect(missing.message).toMatch(/^repository not found/);
    expect(missing.retryable).toBe(false);
    expect(readdirSync(root)).toEqual([]);
  });

  describe('from the git helper process', () => {
    const access = GitAccess.prepare({ credentialsHosts: [], helperProcess: true });
    const host = () => (access as unknown as { host: HelperProcess }).host;

    it('runs every git command of a pass there, not from this process', async () => {
      const remote = bareRepo();
      const report = join(tempDir('ancestry'), 'ancestors');
      // The hook writes the process ids above it: receive-pack, git push, and whoever started git push.
      const walk = 'p=$$; while [ "$p" -gt 1 ]; do echo $p; p=$(cut -d" " -f4 /proc/$p/stat); done';
      writeFileSync(join(remote.dir, 'hooks', 'pre-receive'), `#!/bin/sh\n(${walk}) > '${report}'\n`, { mode: 0o755 });
      const ws = await GitWorkspace.clone(
        join(tempDir('ws'), 'h'),
        { url: remote.url, branch: 'main' },
        identity,
        access,
      );
      writeFileSync(join(ws.dir, 'h.yaml'), 'a: 1\n');
      const sha = await ws.commit(['h.yaml'], 'scaffold: h', 'run-7', 'infra');
      await ws.push();
      expect(gitLog(remote.dir)[0]).toBe(`${sha} scaffold: h`);
      const ancestors = readFileSync(report, 'utf8').trim().split('\n').map(Number);
      expect(host().pid).toBeDefined();
      expect(ancestors).toContain(host().pid);
      // git push is the helper's child: between the hook and this process there is the helper.
      expect(ancestors.indexOf(host().pid!)).toBeLessThan(ancestors.indexOf(process.pid));
    });

    it("reports git's reason as in-process git does, and survives the helper's death", async () => {
      const missing = await GitWorkspace.clone(
        tempDir('ws'),
        { url: 'file:///nonexistent/repo.git', branch: 'main' },
        identity,
        access,
      ).catch((e) => e);
      expect(missing).toBeInstanceOf(GitStepError);
      expect(missing.message).toMatch(/^repository not found/);
      expect(missing.retryable).toBe(false);
      const before = host().pid!;
      process.kill(before, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      // The next command starts a new helper.
      const remote = bareRepo();
      const ws = await GitWorkspace.clone(
        join(tempDir('ws'), 'i'),
        { url: remote.url, branch: 'main' },
        identity,
        access,
      );
      expect(await ws.head()).toBe(gitLog(remote.dir)[0].split(' ')[0]);
      expect(host().pid).not.toBe(before);
    });

    it('fails a command in flight as a retryable git failure when the helper dies under it', async () => {
      const remote = bareRepo();
      // The push waits in the remote's hook long enough for the helper to be killed under it.
      writeFileSync(join(remote.dir, 'hooks', 'pre-receive'), '#!/bin/sh\nsleep 3\n', { mode: 0o755 });
      const ws = await GitWorkspace.clone(
        join(tempDir('ws'), 'j'),
        { url: remote.url, branch: 'main' },
        identity,
        access,
      );
      writeFileSync(join(ws.dir, 'j.yaml'), 'a: 1\n');
      await ws.commit(['j.yaml'], 'scaffold: j', 'run-8', 'infra');
      const pushing = ws.push().catch((e) => e);
      await new Promise((r) => setTimeout(r, 500));
      process.kill(host().pid!, 'SIGKILL');
      const failed = await pushing;
      expect(failed).toBeInstanceOf(GitStepError);
      expect(failed.message).toMatch(/helper process exited \(SIGKILL\)/);
      expect(failed.retryable).toBe(true);
    });
  });

  it('refuses a missing repository and a missing branch without retry', async () => {
    const missing = await GitWorkspace.clone(
      tempDir('ws'),
      { url: 'file:///nonexistent/repo.git', branch: 'main' },
      identity,
    ).catch((e) => e);
    expect(missing).toBeInstanceOf(GitStepError);
    expect(missing.retryable).toBe(false);
    const remote = bareRepo();
    const noBranch = await GitWorkspace.clone(tempDir('ws'), { url: remote.url, branch: 'release' }, identity).catch(
      (e) => e,
    );
    expect(noBranch.message).toMatch(/branch does not exist/);
    expect(noBranch.retryable).toBe(false);
  });
});

describe('scratch clones (LocalGitWorkspaces, what the preview works in)', () => {
  it('gives the work a clone under its root, and removes it whether the work, or the clone, fails or not', async () => {
    const remote = bareRepo();
    const root = tempDir('scratch-clones');
    const clones = new LocalGitWorkspaces(root, { gitIdentity: identity, gitAccess: GitAccess.NONE });
    const signal = new AbortController().signal;
    const seen = await clones.withScratchClone({ url: remote.url, branch: 'main' }, signal, async (ws) => ({
      readme: readFileSync(join(ws.dir, 'README.md'), 'utf8'),
      dir: ws.dir,
    }));
    expect(seen.readme).toBe('# platform fleet\n');
    expect(seen.dir.startsWith(root)).toBe(true);
    const failedWork = clones.withScratchClone({ url: remote.url, branch: 'main' }, signal, () =>
      Promise.reject(new Error('the pass failed')),
    );
    await expect(failedWork).rejects.toThrow('the pass failed');
    await expect(
      clones.withScratchClone({ url: remote.url, branch: 'release' }, signal, async () => 'never'),
    ).rejects.toBeInstanceOf(GitStepError);
    expect(readdirSync(root)).toEqual([]);
  });
});

describe('a working copy handed over to the next pass of the same run (LocalGitWorkspaces)', () => {
  const repoOf = (remote: { url: string }) => ({ url: remote.url, branch: 'main' });
  async function handedOver(name: string, handOverMs?: number) {
    const remote = bareRepo();
    const copies = new LocalGitWorkspaces(
      tempDir('scratch'),
      { gitIdentity: identity, gitAccess: GitAccess.NONE },
      handOverMs,
    );
    const ws = await copies.clone(join(tempDir('ws'), name), repoOf(remote));
    writeFileSync(join(ws.dir, 'infra.yaml'), 'a: 1\n');
    await ws.commit(['infra.yaml'], 'scaffold: infra', 'run-12', 'infra');
    await ws.push();
    await copies.handOver('run-12', ws);
    return { remote, copies, ws };
  }

  it('is taken over while the branch is still at its commit, once', async () => {
    const { remote, copies, ws } = await handedOver('o');
    expect(await copies.takeOver('run-13', repoOf(remote))).toBeNull();
    expect(await copies.takeOver('run-12', repoOf(remote))).toBe(ws);
    expect(await copies.takeOver('run-12', repoOf(remote))).toBeNull();
    expect(existsSync(join(ws.dir, 'infra.yaml'))).toBe(true);
  });

  it('is removed, not taken, when the branch moved, the copy changed or it is of another branch', async () => {
    const moved = await handedOver('p');
    pushAsAnotherWriter(moved.remote.dir, { 'clusters/other/a.yaml': 'a: 1\n' }, 'another cluster');
    expect(await moved.copies.takeOver('run-12', repoOf(moved.remote))).toBeNull();
    expect(existsSync(moved.ws.dir)).toBe(false);

    const changed = await handedOver('q');
    writeFileSync(join(changed.ws.dir, 'left-behind.yaml'), 'b: 1\n');
    expect(await changed.copies.takeOver('run-12', repoOf(changed.remote))).toBeNull();
    expect(existsSync(changed.ws.dir)).toBe(false);

    const other = await handedOver('r');
    expect(await other.copies.takeOver('run-12', { url: other.remote.url, branch: 'release' })).toBeNull();
    expect(existsSync(other.ws.dir)).toBe(false);
  });

  it('is removed when nobody takes it in time', async () => {
    const { remote, copies, ws } = await handedOver('s', 1);
    for (let i = 0; i < 100 && existsSync(ws.dir); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(ws.dir)).toBe(false);
    expect(await copies.takeOver('run-12', repoOf(remote))).toBeNull();
  });
});
