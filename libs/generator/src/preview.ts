import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { GeneratorInputError } from './errors';
import { createTwoFilesPatch } from 'diff';
import { Document } from 'yaml';
import type { GenerateOptions, GenerateSummary } from './context';
import { generate } from './generate';
import { parseDocuments, stringifyDocuments } from './yaml-docs';

export interface PreviewChange {
  /** Repository-relative path. */
  path: string;
  change: 'added' | 'changed' | 'removed';
  /** Unified diff; sealed and encrypted values appear as `<sealed: N keys>` / `<encrypted: N keys>`. */
  diff: string;
}

export interface PreviewResult {
  summary: GenerateSummary;
  changes: PreviewChange[];
}

/** Every regular file below a folder, relative, without .git (symlinks are listed, never followed). */
function filesBelow(root: string, rel = ''): string[] {
  if (!existsSync(join(root, rel))) return [];
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((e) => {
    if (e.name === '.git') return [];
    const child = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? filesBelow(root, child) : [child];
  });
}

/**
 * A link in the working copy that the scratch copy would share with the original: an absolute one, or
 * one leading out of the working copy. Copied as it is, the pass would write through it outside the
 * scratch folder; the preview refuses instead.
 */
function escapingLinks(root: string, rel = ''): string[] {
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((e) => {
    if (e.name === '.git') return [];
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isSymbolicLink()) {
      const target = readlinkSync(join(root, child));
      const inside = !isAbsolute(target) && !relative(root, resolve(dirname(join(root, child)), target)).startsWith('..');
      return inside ? [] : [child];
    }
    return e.isDirectory() ? escapingLinks(root, child) : [];
  });
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
        for (const field of ['data', 'stringData']) if (body[field]) doc.set(field, `<encrypted: ${keyCount(body[field])} keys>`);
        doc.set('sops', '<sops metadata>');
      }
      return doc as Document;
    });
    return stringifyDocuments(docs);
  } catch {
    return '<not shown: protected values in a file that does not parse>\n';
  }
}

function read(root: string, rel: string): Buffer | null {
  const abs = join(root, rel);
  if (!existsSync(abs) || lstatSync(abs).isSymbolicLink()) return null;
  return readFileSync(abs);
}

/**
 * What a pass would do to the repository, without touching it: the pass runs on a scratch copy
 * (the working copy without .git; symlinks copied as links, never followed), and the two trees are
 * compared. Errors are the real pass's (bad input, a tree that fails validation), so exit codes agree.
 */
export async function preview(options: GenerateOptions): Promise<PreviewResult> {
  const links = escapingLinks(options.repoDir);
  if (links.length > 0) throw new GeneratorInputError(`the working copy has links that lead out of it, which a preview would write through: ${links.join(', ')}`);
  const parent = options.scratchDir ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const scratch = mkdtempSync(join(parent, 'gitops-preview-'));
  try {
    cpSync(options.repoDir, scratch, { recursive: true, dereference: false, verbatimSymlinks: true, filter: (src) => relative(options.repoDir, src).split(sep)[0] !== '.git' });
    const { summary } = await generate({ ...options, repoDir: scratch });
    const paths = [...new Set([...filesBelow(options.repoDir), ...filesBelow(scratch)])].sort();
    const changes: PreviewChange[] = [];
    for (const path of paths) {
      const before = read(options.repoDir, path);
      const after = read(scratch, path);
      if (before && after ? before.equals(after) : before === after) continue;
      const change = before === null ? 'added' : after === null ? 'removed' : 'changed';
      const [shownBefore, shownAfter] = [before, after].map((b) => (b ? maskProtected(b.toString('utf8'), path) : ''));
      // Re-sealed values with the same keys: the masked texts agree, the files do not.
      const diff =
        shownBefore === shownAfter
          ? `${path}: protected values replaced, keys unchanged\n`
          : createTwoFilesPatch(`a/${path}`, `b/${path}`, shownBefore, shownAfter, undefined, undefined, { context: 3 });
      changes.push({ path, change, diff });
    }
    return { summary, changes };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
