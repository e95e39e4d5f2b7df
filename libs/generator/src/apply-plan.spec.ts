import { mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GenerationPlan } from './context';
import { applyPlan } from './target';

const planWriting = (writes: Record<string, string>): GenerationPlan =>
  ({
    writes: new Map(Object.entries(writes).map(([rel, text]) => [rel, Buffer.from(text)])),
    removals: [],
    sharedCopies: [],
    copiedFiles: new Map(),
    summary: {},
    credentials: [],
  }) as unknown as GenerationPlan;

describe('applyPlan', () => {
  it('leaves a file that already holds the planned bytes untouched (same inode and mtime), and writes the others', () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-apply-'));
    writeFileSync(join(repo, 'same.yaml'), 'kind: Same\n');
    writeFileSync(join(repo, 'changed.yaml'), 'kind: Old\n');
    const past = new Date('2020-01-01T00:00:00Z');
    for (const f of ['same.yaml', 'changed.yaml']) utimesSync(join(repo, f), past, past);
    const before = statSync(join(repo, 'same.yaml'));

    applyPlan(
      repo,
      planWriting({ 'same.yaml': 'kind: Same\n', 'changed.yaml': 'kind: New\n', 'new/added.yaml': 'kind: Added\n' }),
    );

    const after = statSync(join(repo, 'same.yaml'));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(readFileSync(join(repo, 'changed.yaml'), 'utf8')).toBe('kind: New\n');
    expect(statSync(join(repo, 'changed.yaml')).mtimeMs).toBeGreaterThan(past.getTime());
    expect(readFileSync(join(repo, 'new/added.yaml'), 'utf8')).toBe('kind: Added\n');
  });

  it('writes a file of the same size whose bytes differ', () => {
    const repo = mkdtempSync(join(tmpdir(), 'gs-apply-'));
    writeFileSync(join(repo, 'f.yaml'), 'name: aaaa\n');
    applyPlan(repo, planWriting({ 'f.yaml': 'name: bbbb\n' }));
    expect(readFileSync(join(repo, 'f.yaml'), 'utf8')).toBe('name: bbbb\n');
  });
});
