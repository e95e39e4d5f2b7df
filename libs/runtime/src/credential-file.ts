import { statSync } from 'node:fs';

/**
 * Why a credential file named by a setting or an option must not be used, or null: it cannot be read, or its
 * owner is not the only one who may read or write it (group or others could take the secret, or change it).
 * The answer names the problem, never the file's content; the caller adds the file and the setting.
 */
export function credentialFileProblem(file: string): string | null {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (e) {
    return `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return (mode & 0o077) !== 0 ? 'is readable or writable by group or others: chmod 600 it' : null;
}
