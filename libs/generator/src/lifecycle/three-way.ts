/**
 * A three-way merge of one file, as `git merge-file` makes it: the environment's version (ours), what
 * the recorded reference commit rendered (base) and what the new commit renders (theirs). A merge with
 * conflicts is reported by the lines each side changed, never written: the merged text is kept only
 * when it merged cleanly, so no conflict marker can reach the repository.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { structuredPatch } from 'diff';
import { ownEnvironment } from '../reference-git';

/** Lines of a file, 1-based and inclusive; an insertion before line N is [N, N-1]. */
export interface LineRange {
  start: number;
  end: number;
}

/** One overlapping edit: where each side changed what, and what each side holds there. */
export interface ConflictHunk {
  /** Lines of the recorded commit's render both sides changed. */
  base_lines: LineRange;
  ours_lines: LineRange;
  theirs_lines: LineRange;
  ours: string;
  theirs: string;
}

export type MergeOutcome = { clean: true; merged: Buffer } | { clean: false; conflicts: ConflictHunk[] };

/** Merges three versions of a file; the git program by default, so a test or another engine can stand in. */
export interface FileMerger {
  merge(ours: Buffer, base: Buffer, theirs: Buffer): MergeOutcome;
}

/**
 * `git merge-file -p`, run on copies in a scratch folder with only the variables git needs (as every
 * git of the lifecycle runs): its exit status is the number of conflicts, negative on failure.
 */
export const GIT_MERGE_FILE: FileMerger = {
  merge(ours, base, theirs) {
    const dir = mkdtempSync(join(tmpdir(), 'gitops-merge-'));
    try {
      const files = (['ours', 'base', 'theirs'] as const).map((name, i) => {
        writeFileSync(join(dir, name), [ours, base, theirs][i]);
        return join(dir, name);
      });
      // cwd: the scratch folder, so no repository's configuration around the caller is read.
      const result = spawnSync('git', ['merge-file', '-p', '--quiet', ...files], {
        cwd: dir,
        env: { ...ownEnvironment(), GIT_CONFIG_NOSYSTEM: '1' },
        maxBuffer: 64 * 1024 * 1024,
      });
      if (result.error || result.status === null || result.status < 0 || result.status > 127)
        throw new Error(`git merge-file failed: ${result.error?.message ?? result.stderr.toString().trim()}`);
      if (result.status === 0) return { clean: true, merged: result.stdout };
      return { clean: false, conflicts: conflictHunks(ours, base, theirs) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

interface Change {
  /** Boundaries of the base it spans: an edit of lines s..s+n-1 spans [s, s+n], an insertion before line s [s, s]. */
  from: number;
  to: number;
  newStart: number;
  newLines: number;
  text: string;
}

function changes(base: string, side: string): Change[] {
  return structuredPatch('base', 'side', base, side, '', '', { context: 0 }).hunks.map((h) => ({
    from: h.oldStart,
    to: h.oldStart + h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    text: h.lines
      .filter((l) => l.startsWith('+'))
      .map((l) => l.slice(1) + '\n')
      .join(''),
  }));
}

const range = (start: number, lines: number): LineRange => ({ start, end: start + lines - 1 });

/**
 * The pairs of edits that touch the same or adjacent lines of the base (where git merge-file too sees
 * a conflict), each with both sides' lines. Touching edits of one side are one conflict with each
 * edit of the other they touch.
 */
export function conflictHunks(ours: Buffer, base: Buffer, theirs: Buffer): ConflictHunk[] {
  const b = base.toString('utf8');
  const mine = changes(b, ours.toString('utf8'));
  const their = changes(b, theirs.toString('utf8'));
  const found: ConflictHunk[] = [];
  for (const o of mine)
    for (const t of their)
      if (o.from <= t.to && t.from <= o.to) {
        const from = Math.min(o.from, t.from);
        found.push({
          base_lines: { start: from, end: Math.max(o.to, t.to) - 1 },
          ours_lines: range(o.newStart, o.newLines),
          theirs_lines: range(t.newStart, t.newLines),
          ours: o.text,
          theirs: t.text,
        });
      }
  return found;
}
