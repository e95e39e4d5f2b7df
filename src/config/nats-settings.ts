import { readFileSync } from 'node:fs';
import {
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
} from '@nats-io/nats-core';
import type { Authenticator, TlsOptions } from '@nats-io/nats-core';
import { readableFile as readable, SettingError } from './setting-files';

/**
 * How every process (service, scaffold-runner, scaffolderctl) reaches NATS: the servers, one way of
 * authenticating and TLS, checked at start. Secrets come from files or the environment, never from the
 * URL (which shows up in logs), and files are read again at each (re)connect so a rotated Secret is
 * picked up without a restart.
 */
export interface NatsSettings {
  servers: string[];
  authenticator?: Authenticator;
  tls?: TlsOptions;
  /**
   * Prefix of this process's reply subjects. Every identity gets its own (deploy/nats), so one that may
   * subscribe to its replies cannot read another's (JetStream answers, run inputs among them).
   */
  inboxPrefix: string;
  /** What to print about the connection (no secrets): e.g. "tls://a:4222,tls://b:4222 (creds, TLS)". */
  description: string;
}

export interface NatsEnv {
  NATS_URL: string;
  NATS_CREDS?: string;
  NATS_NKEY_SEED_FILE?: string;
  NATS_USER?: string;
  NATS_PASSWORD?: string;
  NATS_PASSWORD_FILE?: string;
  NATS_TOKEN?: string;
  NATS_TOKEN_FILE?: string;
  NATS_TLS_CA?: string;
  NATS_TLS_CERT?: string;
  NATS_TLS_KEY?: string;
  NATS_INBOX_PREFIX?: string;
}

/** Where every process looks for NATS when NATS_URL is not set: a server on this machine. */
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

const SCHEMES = new Set(['nats:', 'tls:', 'ws:', 'wss:']);

function servers(value: string): string[] {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new SettingError('NATS_URL: no server given');
  for (const server of list) {
    // host:port without a scheme is what nats.js accepts too.
    const url = (() => {
      try {
        return new URL(/^[a-z]+:\/\//i.test(server) ? server : `nats://${server}`);
      } catch {
        throw new SettingError(`NATS_URL: "${server}" is not a server URL`);
      }
    })();
    if (!SCHEMES.has(url.protocol))
      throw new SettingError(`NATS_URL: scheme ${url.protocol} is not one of nats://, tls://`);
    if (url.username || url.password)
      throw new SettingError(
        'NATS_URL: must not carry credentials; use NATS_CREDS, NATS_NKEY_SEED_FILE, NATS_USER/NATS_PASSWORD_FILE or NATS_TOKEN_FILE',
      );
  }
  return list;
}

/** A secret given inline or as a file (the file wins when both are set is refused: one source only). */
function secret(env: NatsEnv, inline: keyof NatsEnv, file: keyof NatsEnv): (() => string) | undefined {
  if (env[inline] && env[file]) throw new SettingError(`${inline} and ${file}: set one of them`);
  const path = env[file];
  if (path) {
    readable(file, path);
    return () => readFileSync(path, 'utf8').trim();
  }
  const value = env[inline];
  return value ? () => value : undefined;
}

function authenticator(env: NatsEnv): { authenticator?: Authenticator; method?: string } {
  const password = secret(env, 'NATS_PASSWORD', 'NATS_PASSWORD_FILE');
  const token = secret(env, 'NATS_TOKEN', 'NATS_TOKEN_FILE');
  const methods = [
    env.NATS_CREDS && 'NATS_CREDS',
    env.NATS_NKEY_SEED_FILE && 'NATS_NKEY_SEED_FILE',
    (env.NATS_USER || password) && 'NATS_USER',
    token && 'NATS_TOKEN',
  ].filter(Boolean);
  if (methods.length > 1) throw new SettingError(`${methods.join(', ')}: give one way of authenticating to NATS`);
  const creds = env.NATS_CREDS && readable('NATS_CREDS', env.NATS_CREDS);
  if (creds)
    return { authenticator: credsAuthenticator(() => readFileSync(readable('NATS_CREDS', creds))), method: 'creds' };
  const seedFile = env.NATS_NKEY_SEED_FILE && readable('NATS_NKEY_SEED_FILE', env.NATS_NKEY_SEED_FILE);
  if (seedFile)
    return {
      authenticator: nkeyAuthenticator(() =>
        new TextEncoder().encode(readFileSync(readable('NATS_NKEY_SEED_FILE', seedFile), 'utf8').trim()),
      ),
      method: 'nkey',
    };
  if (env.NATS_USER || password) {
    if (!env.NATS_USER || !password)
      throw new SettingError('NATS_USER and NATS_PASSWORD (or NATS_PASSWORD_FILE): give both');
    return { authenticator: usernamePasswordAuthenticator(env.NATS_USER, password), method: `user ${env.NATS_USER}` };
  }
  if (token) return { authenticator: tokenAuthenticator(token), method: 'token' };
  return {};
}

function tls(env: NatsEnv, list: string[]): TlsOptions | undefined {
  if (Boolean(env.NATS_TLS_CERT) !== Boolean(env.NATS_TLS_KEY))
    throw new SettingError('NATS_TLS_CERT and NATS_TLS_KEY: give both (a client certificate and its key)');
  const options: TlsOptions = {};
  if (env.NATS_TLS_CA) options.caFile = readable('NATS_TLS_CA', env.NATS_TLS_CA);
  if (env.NATS_TLS_CERT) options.certFile = readable('NATS_TLS_CERT', env.NATS_TLS_CERT);
  if (env.NATS_TLS_KEY) options.keyFile = readable('NATS_TLS_KEY', env.NATS_TLS_KEY);
  // A tls:// server means TLS is required even with only the system CAs.
  const wanted = Object.keys(options).length > 0 || list.some((s) => /^tls:\/\//i.test(s));
  return wanted ? options : undefined;
}

export function natsSettings(env: NatsEnv): NatsSettings {
  const list = servers(env.NATS_URL);
  const { authenticator: auth, method } = authenticator(env);
  const tlsOptions = tls(env, list);
  const traits = [method, tlsOptions && 'TLS'].filter(Boolean);
  const inboxPrefix = env.NATS_INBOX_PREFIX || '_INBOX';
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(inboxPrefix))
    throw new SettingError('NATS_INBOX_PREFIX: subject tokens of letters, digits, _ and - only (no wildcards)');
  return {
    servers: list,
    authenticator: auth,
    tls: tlsOptions,
    inboxPrefix,
    description: `${list.join(',')}${traits.length ? ` (${traits.join(', ')})` : ''}`,
  };
}

/** The options every NATS connection of a process is opened with (the event log's and the request/reply API's). */
export function natsConnectOptions(settings: NatsSettings, name: string) {
  return {
    servers: settings.servers,
    name,
    ...(settings.authenticator ? { authenticator: settings.authenticator } : {}),
    ...(settings.tls ? { tls: settings.tls } : {}),
    inboxPrefix: settings.inboxPrefix,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  };
}
