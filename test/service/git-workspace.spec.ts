import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitStepError, GitWorkspace } from '../../libs/git/src';
import { tempDir } from '../support/files';
import { bareRepo, gitLog } from '../support/services';

const identity = { name: 'test', email: 'test@example.com' };

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

  it('classifies a push rejected because the branch moved as retryable and lands on the new head after reset', async () => {
    const remote = bareRepo();
    const ws = await GitWorkspace.clone(join(tempDir('ws'), 'c'), { url: remote.url, branch: 'main' }, identity);
    // Someone else pushes first.
    const other = tempDir('other');
    execFileSync('git', ['clone', '-q', remote.dir, other]);
    writeFileSync(join(other, 'other.txt'), 'x');
    execFileSync('git', ['-C', other, '-c', 'user.name=o', '-c', 'user.email=o@x', 'add', '.']);
    execFileSync('git', ['-C', other, '-c', 'user.name=o', '-c', 'user.email=o@x', 'commit', '-qm', 'moved']);
    execFileSync('git', ['-C', other, 'push', '-q', 'origin', 'HEAD:main']);

    writeFileSync(join(ws.dir, 'mine.yaml'), 'a: 1\n');
    await ws.commit(['mine.yaml'], 'scaffold: infra', 'run-3', 'infra');
    const rejected = await ws.push().catch((e) => e);
    expect(rejected).toBeInstanceOf(GitStepError);
    expect(rejected.retryable).toBe(true);
    expect(rejected.message).toMatch(/push rejected/);
    await ws.resetToRemote();
    writeFileSync(join(ws.dir, 'mine.yaml'), 'a: 1\n');
    await ws.commit(['mine.yaml'], 'scaffold: infra', 'run-3', 'infra');
    await ws.push();
    expect(gitLog(remote.dir).map((l) => l.split(' ').slice(1).join(' '))).toEqual(['scaffold: infra', 'moved', 'seed']);
  });

  it('refuses a missing repository and a missing branch without retry', async () => {
    const missing = await GitWorkspace.clone(tempDir('ws'), { url: 'file:///nonexistent/repo.git', branch: 'main' }, identity).catch((e) => e);
    expect(missing).toBeInstanceOf(GitStepError);
    expect(missing.retryable).toBe(false);
    const remote = bareRepo();
    const noBranch = await GitWorkspace.clone(tempDir('ws'), { url: remote.url, branch: 'release' }, identity).catch((e) => e);
    expect(noBranch.message).toMatch(/branch does not exist/);
    expect(noBranch.retryable).toBe(false);
  });
});
