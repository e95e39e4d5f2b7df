import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { Document } from 'yaml';
import type { GenerateOptions, GenerateSummary, GenerationPlan } from './context';
import { planGeneration } from './generate';
import { listFiles } from './reference';
import { readRepoFile, repoEntry, withRepoLimits } from './repo-files';
import { parseDocuments, stringifyDocuments } from './yaml-docs';

export interface PreviewChange {
  /** Repository-relative path. */
  path: string;
  change: 'added' | 'changed' | 'removed';
  /**
   * Unified diff; sealed and encrypted values appear as `<sealed: N keys>` / `<encrypted: N keys>`.
   * For a file copied from the reference unchanged, one line naming the copy instead.
   */
  diff: string;
  /** The reference file this one becomes a byte-for-byte copy of (a shared folder's file, a bootstrap file). */
  copied_from?: string;
}

export interface PreviewResult {
  summary: GenerateSummary;
  changes: PreviewChange[];
  /** An infra pass's rehearsal of the full pass that follows it (its leftovers and warnings; nothing of it shown as changes). */
  rehearsal?: GenerateSummary;
}

const keyCount = (values: unknown) => Object.keys((values as object) ?? {}).length;

/**
 * A manifest as a preview shows it: SealedSecret payloads and SOPS values are replaced by a count, so
 * a diff shows which Secrets change and which keys they hold, never a ciphertext or a value.
 */
export function maskProtected(text: string, path: string): string {
  if (!/\.ya?ml$/.test(path) || !/SealedSecret|sops:/.test(text)) return text;
  try {
    const docs = parseDocuments(text, path).map((doc) => {
      const body = doc.toJS();
      if (body?.kind === 'SealedSecret' && body.spec?.encryptedData) {
        doc.setIn(['spec', 'encryptedData'], `<sealed: ${keyCount(body.spec.encryptedData)} keys>`);
      } else if (body?.sops) {
        for (const field of ['data', 'stringData'])
          if (body[field]) doc.set(field, `<encrypted: ${keyCount(body[field])} keys>`);
        doc.set('sops', '<sops metadata>');
      }
      return doc as Document;
    });
    return stringifyDocuments(docs);
  } catch {
    return '<not shown: protected values in a file that does not parse>\n';
  }
}

/** A file of the working copy (null: absent, or a symbolic link, which is never followed). */
function read(root: string, rel: string): Buffer | null {
  const kind = repoEntry(root, rel);
  return kind === undefined || kind === 'link' ? null : readRepoFile(root, rel);
}

/** What a file will hold after the plan (null: absent), and the reference file it is a copy of. */
interface PlannedFile {
  bytes: Buffer | null;
  copiedFrom?: string;
}

/** Every file the plan copies, removes or writes, with what it will hold: later steps override earlier ones, as in applyPlan. */
function plannedFiles(plan: GenerationPlan): Map<string, PlannedFile> {
  const after = new Map<string, PlannedFile>();
  for (const { dir, root, omit = [] } of plan.sharedCopies)
    for (const rel of listFiles(join(root, dir)).filter((f) => !omit.includes(f)))
      after.set(`${dir}/${rel}`, { bytes: readRepoFile(root, `${dir}/${rel}`), copiedFrom: `${dir}/${rel}` });
  for (const path of plan.removals) after.set(path, { bytes: null });
  for (const [path, bytes] of plan.writes) after.set(path, { bytes, copiedFrom: plan.copiedFiles.get(path) });
  return after;
}

const lineCount = (bytes: Buffer) => bytes.toString('utf8').split('\n').length - (bytes.at(-1) === 0x0a ? 1 : 0);

/** One file's change as a preview shows it, or undefined when its bytes stay the same. */
function describeChange(path: string, before: Buffer | null, planned: PlannedFile): PreviewChange | undefined {
  const after = planned.bytes;
  if (before && after ? before.equals(after) : before === after) return undefined;
  const change = before === null ? 'added' : after === null ? 'removed' : 'changed';
  // The reference's own files are reviewed where the reference is: a copy is named, its content not repeated.
  if (after && planned.copiedFrom !== undefined)
    return {
      path,
      change,
      diff: `${path}: copied unchanged from the reference's ${planned.copiedFrom} (${lineCount(after)} lines, not shown)\n`,
      copied_from: planned.copiedFrom,
    };
  const [shownBefore, shownAfter] = [before, after].map((b) => (b ? maskProtected(b.toString('utf8'), path) : ''));
  // Re-sealed values with the same keys: the masked texts agree, the files do not.
  const diff =
    shownBefore === shownAfter
      ? `${path}: protected values replaced, keys unchanged\n`
      : createTwoFilesPatch(`a/${path}`, `b/${path}`, shownBefore, shownAfter, undefined, undefined, { context: 3 });
  return { path, change, diff };
}

/**
 * What a pass would do to the repository, without writing to it: the pass's plan compared with the
 * files of the working copy (links are never followed; a link counts as no file). Errors are the real
 * pass's (bad input, a working copy with links out of it or over the limits, a tree that fails
 * validation), so exit codes agree.
 */
export function preview(options: GenerateOptions): Promise<PreviewResult> {
  return withRepoLimits(options.repoLimits, () => previewWithinLimits(options));
}

async function previewWithinLimits(options: GenerateOptions): Promise<PreviewResult> {
  const plan = await planGeneration(options);
  const after = plannedFiles(plan);
  const changes = [...after.keys()]
    .sort()
    .flatMap((path) => describeChange(path, read(options.repoDir, path), after.get(path)!) ?? []);
  return { summary: plan.summary, changes, ...(plan.rehearsal ? { rehearsal: plan.rehearsal } : {}) };
}
