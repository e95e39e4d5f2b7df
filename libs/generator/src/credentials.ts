import { randomInt } from 'node:crypto';
import { GeneratorInputError } from './errors';

/** Registry pull credentials: either the three values or a whole docker config JSON. */
export type RegistryCredentials = { server: string; username: string; password: string } | { dockerConfigJson: string };

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform random characters from a cryptographic RNG (randomInt rejects modulo bias). */
export function randomString(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export const PASSWORD_LENGTH = 40;

/** A Secret's values as bytes: `data` is base64, `stringData` wins over it as the API server does. */
export function secretValues(body: any): Record<string, Buffer> {
  const values: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(body.data ?? {})) values[k] = Buffer.from(String(v ?? ''), 'base64');
  for (const [k, v] of Object.entries(body.stringData ?? {})) values[k] = Buffer.from(String(v ?? ''), 'utf8');
  return values;
}

/** The registry pull credentials as a .dockerconfigjson (or legacy .dockercfg) value. */
export function dockerConfig(registry: RegistryCredentials | undefined, where: string, legacy: boolean): Buffer {
  if (!registry) {
    throw new GeneratorInputError(
      `${where} is a registry pull secret: give REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD or --registry-auth FILE`,
    );
  }
  if ('dockerConfigJson' in registry) {
    const parsed = JSON.parse(registry.dockerConfigJson);
    return Buffer.from(JSON.stringify(legacy ? parsed.auths : parsed));
  }
  const entry = {
    username: registry.username,
    password: registry.password,
    auth: Buffer.from(`${registry.username}:${registry.password}`).toString('base64'),
  };
  const auths = { [registry.server]: entry };
  return Buffer.from(JSON.stringify(legacy ? auths : { auths }));
}
