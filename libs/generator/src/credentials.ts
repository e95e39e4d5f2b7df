import { randomInt } from 'node:crypto';
import { GeneratorInputError } from './errors';

/** Registry pull credentials: either the three values or a whole docker config JSON. */
export type RegistryCredentials = { server: string; username: string; password: string } | { dockerConfigJson: string };

export interface RegeneratedSecret {
  name: string;
  namespace: string;
  type: string;
  labels: Record<string, string>;
  /** Fresh values. They leave this module only sealed. */
  data: Record<string, Buffer>;
  /** Keys whose reference value was kept because it is configuration, not a credential (database name, host, port). */
  keptKeys: string[];
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform random characters from a cryptographic RNG (randomInt rejects modulo bias). */
export function randomString(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export const PASSWORD_LENGTH = 40;

const CONFIG_KEY = /(^|[-_.])(database|db|dbname|host|hostname|port|vhost|schema|sslmode)$/i;
const USER_KEY = /(^|[-_.])(user|username|login)$/i;
const DOCKER_KEYS = new Set(['.dockerconfigjson', '.dockercfg']);

/** A Secret's values as bytes: `data` is base64, `stringData` wins over it as the API server does. */
export function secretValues(body: any): Record<string, Buffer> {
  const values: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(body.data ?? {})) values[k] = Buffer.from(String(v ?? ''), 'base64');
  for (const [k, v] of Object.entries(body.stringData ?? {})) values[k] = Buffer.from(String(v ?? ''), 'utf8');
  return values;
}

function dockerConfig(registry: RegistryCredentials | undefined, where: string, legacy: boolean): Buffer {
  if (!registry) {
    throw new GeneratorInputError(`${where} is a registry pull secret: give REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD or --registry-auth FILE`);
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

/**
 * Fresh credentials for one reference Secret. Passwords, tokens and usernames are new random values;
 * a value that embeds another credential (a connection URL) keeps its shape with the new values
 * substituted; configuration keys (database name, host, port) keep their reference value.
 */
export function regenerateSecret(body: any, namespace: string, registry: RegistryCredentials | undefined, where: string): RegeneratedSecret {
  const old = secretValues(body);
  const type = String(body.type ?? 'Opaque');
  const data: Record<string, Buffer> = {};
  const keptKeys: string[] = [];
  const replacements: Array<[string, string]> = [];
  const keys = Object.keys(old).sort();
  const oldText = (k: string) => old[k].toString('utf8');
  const isAtomicCredential = (k: string) => !DOCKER_KEYS.has(k) && !CONFIG_KEY.test(k);
  const embedsAnother = (k: string) => keys.some((other) => other !== k && isAtomicCredential(other) && oldText(other).length >= 4 && oldText(k).includes(oldText(other)));

  for (const k of keys) {
    if (DOCKER_KEYS.has(k)) data[k] = dockerConfig(registry, where, k === '.dockercfg');
    else if (CONFIG_KEY.test(k)) {
      data[k] = old[k];
      keptKeys.push(k);
    } else if (!embedsAnother(k)) {
      const fresh = USER_KEY.test(k) ? 'u' + randomString(15, LOWER) : randomString(PASSWORD_LENGTH);
      data[k] = Buffer.from(fresh);
      if (oldText(k).length > 0) replacements.push([oldText(k), fresh]);
    }
  }
  // Longest first, so that a password containing a username is replaced whole.
  replacements.sort((a, b) => b[0].length - a[0].length);
  for (const k of keys.filter((k) => !(k in data))) {
    let text = oldText(k);
    for (const [from, to] of replacements) text = text.split(from).join(to);
    data[k] = Buffer.from(text);
  }
  return { name: String(body.metadata?.name), namespace, type, labels: { ...(body.metadata?.labels ?? {}) }, data, keptKeys };
}
