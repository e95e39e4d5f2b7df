/**
 * The credentials a pass takes from its user, as the command line reads them: registry pull credentials from the
 * environment (REGISTRY_*) or a Docker config file, supplied credentials from a file only its owner may read. Never
 * from command-line values; errors name files and keys, never values.
 */
import { readFileSync } from 'node:fs';
import { credentialFileProblem } from '#libs/runtime';
import { parseSuppliedCredentials, SuppliedCredentials } from './credential-plan';
import type { RegistryCredentials } from './credentials';
import { GeneratorInputError } from './errors';

/** Registry pull credentials: --registry-auth FILE (a Docker config), else all of REGISTRY_SERVER/USERNAME/PASSWORD, or none. */
export function registryFrom(env: NodeJS.ProcessEnv, authFile: string | undefined): RegistryCredentials | undefined {
  if (authFile) {
    const text = readFileSync(authFile, 'utf8');
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new GeneratorInputError(`--registry-auth ${authFile} is not JSON`);
    }
    if (!parsed || typeof parsed.auths !== 'object')
      throw new GeneratorInputError(`--registry-auth ${authFile} has no "auths" object`);
    return { dockerConfigJson: text };
  }
  const { REGISTRY_SERVER: server, REGISTRY_USERNAME: username, REGISTRY_PASSWORD: password } = env;
  if (!server && !username && !password) return undefined;
  if (!server || !username || !password)
    throw new GeneratorInputError('set all of REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD, or none');
  return { server, username, password };
}

/** The supplied credentials file (--credentials): readable by its owner only (it holds third-party credentials). Errors name keys, never values. */
export function suppliedFrom(file: string | undefined): SuppliedCredentials | undefined {
  if (!file) return undefined;
  const problem = credentialFileProblem(file);
  if (problem) throw new GeneratorInputError(`--credentials ${file} ${problem}`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new GeneratorInputError(`--credentials ${file} cannot be read`);
  }
  return parseSuppliedCredentials(text, `--credentials ${file}`);
}

/** The sealed-secrets certificate (PEM) of --sealing-cert FILE, when given. */
export function sealingCertFrom(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new GeneratorInputError(`--sealing-cert ${file} cannot be read`);
  }
}
