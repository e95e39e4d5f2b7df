import { accessSync, constants } from 'node:fs';

/** A setting that cannot be used as given; the message starts with the variable's name. */
export class SettingError extends Error {}

/** A file a setting names, checked readable at start (so a missing mount stops the process, naming the variable). */
export function readableFile(variable: string, path: string): string {
  try {
    accessSync(path, constants.R_OK);
  } catch {
    throw new SettingError(`${variable}: ${path} cannot be read`);
  }
  return path;
}
