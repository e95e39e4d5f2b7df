import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A commit id as git writes it in a ref file: SHA-1 or SHA-256, lower-case hex. */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

const readOrEmpty = (path: string) => readFile(path, 'utf8').catch(() => '');

/**
 * The commit a ref names, read from the files git keeps refs in (the loose ref file, else the
 * `packed-refs` list), without starting git: on two busy cores each git started costs tens of
 * milliseconds. Undefined when neither holds it in that plain shape (another ref storage, a symbolic
 * ref), and the caller asks git.
 */
export async function commitFromRefFiles(gitDir: string, ref: string): Promise<string | undefined> {
  const loose = (await readOrEmpty(join(gitDir, ref))).trim();
  if (OBJECT_ID.test(loose)) return loose;
  if (loose !== '') return undefined;
  for (const line of (await readOrEmpty(join(gitDir, 'packed-refs'))).split('\n')) {
    const [id, name] = line.split(' ');
    if (name === ref && OBJECT_ID.test(id)) return id;
  }
  return undefined;
}

/**
 * The commit HEAD is on, read from the files: `HEAD` naming `branch` (then that branch's ref) or a
 * commit when detached. Undefined when HEAD names another branch or is in another shape.
 */
export async function headFromRefFiles(gitDir: string, branch: string): Promise<string | undefined> {
  const head = (await readOrEmpty(join(gitDir, 'HEAD'))).trim();
  const branchRef = `refs/heads/${branch}`;
  if (head === `ref: ${branchRef}`) return commitFromRefFiles(gitDir, branchRef);
  return OBJECT_ID.test(head) ? head : undefined;
}
