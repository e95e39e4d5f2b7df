/**
 * What a Secret key holds, decided from its name, its value where readable, and what the object
 * says about it (a secretGenerator's `files:` entry is a whole file). Only a credential the new
 * cluster owns may be generated: inventing a config file, a private key, a domain or another
 * system's API key gives a Secret that applies cleanly and breaks what reads it, without a word.
 */

/**
 * - owned: a password-like credential between the cluster's own components (generated fresh);
 * - user: a username the cluster's components share (generated fresh, `u` + letters);
 * - file: a whole file or structured document (config files, PEM, keys, JSON/YAML/TOML/INI);
 * - third-party: a credential only another system issues (API keys, tokens, webhooks, OAuth client
 *   secrets, SMTP, DSNs, VPN keys);
 * - address: a host, domain, IP or e-mail (configuration: never a random string);
 * - plain: a readable value that holds no credential (numbers, booleans, URLs without user information);
 * - unknown: none of these (supplied: the generator does not invent what it cannot name).
 */
export type KeyKind = 'owned' | 'user' | 'file' | 'third-party' | 'address' | 'plain' | 'unknown';

/** Key names of whole files: `server.toml`, `config.yaml`, `tls.key`, `ca.pem`. */
const FILE_KEY = /\.(toml|ya?ml|json|ini|conf|cfg|pem|key|crt|cert|p12|pfx|jks|env|properties|xml|txt|htpasswd|ovpn)$/i;

/** Words of a key's name, lower case, joined by `_` and framed by `_` (`SECRET_DOMAIN_2` -> `_secret_domain_2_`). */
export function nameWords(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return `_${words.join('_')}_`;
}

/**
 * A name without the `SECRET_` / `CLUSTER_SECRET_` prefix cluster-template's cluster-secrets gives
 * every key (`SECRET_DOMAIN` names a domain, not a secret); `SECRET_KEY` keeps it.
 */
function withoutSecretPrefix(words: string): string {
  const rest = words.replace(/^_(cluster_)?secret_/, '_');
  return rest === '_' || /^_key(_base)?_$/.test(rest) ? words : rest;
}

/** Credentials another system issues, by a word or a pair of words of the key's name. */
const THIRD_PARTY =
  /_(api_?key|apikey|api_?token|token|access_?token|refresh_?token|bot_?token|webhook\w*?|hook_?url|client_?secret|oauth|oidc_client|smtp|mail_?password|dsn|private_?key|privkey|secret_?access_?key|access_?key(_?id)?|user_?key|userkey|account_?id|license|licence|vpn|openvpn|wireguard|wg|ssh|pushover|telegram|discord|slack|sentry|twilio|sendgrid|mailgun|stripe)_/;
/** Credentials the cluster's own components share. */
const OWNED =
  /_(password|passwd|pass|pwd|passphrase|secret|secret_?key(_?base)?|encryption_?key|signing_?key|master_?key|jwt|session|cookie|salt|pepper|hmac|nonce|csrf)_/;
/** A word that makes a name a credential's even beside a host's (`SMTP_HOST` is a host, `SMTP_HOST_PASSWORD` is not). */
const SECRET_WORD =
  /_(password|passwd|pass|pwd|secret|key|token|apikey|userkey|dsn|webhook\w*|license|licence|salt|hmac|jwt)_/;
const USER = /_(user|username|login)_$/;
/** Names of hosts, domains and addresses (`SECRET_DOMAIN_2`, `SMTP_HOST`, `RECORD_NAME`). */
const ADDRESS =
  /_(domain|domains|host|hosts|hostname|fqdn|ip|ips|address|addr|endpoint|server|record_?name|email|mail|e_?mail)(_\d+)?_/;
/** Settings a connection is made with (a database's name, a port): a template builds them with the credentials. */
const CONFIG = /_(database|db|dbname|port|vhost|schema|sslmode)_$/;
/** Other settings, by their names (an account's or zone's id, a region, a bucket). */
const SETTING = /_(id|region|bucket|zone|channel|guild|tenant)_$/;

/** A key named like a setting a connection is made with (`database`, `DB_PORT`). */
export const namesConnectionSetting = (key: string) => CONFIG.test(nameWords(key));

/** A DNS name (`example.com`, `*.example.com`, `k8s-0.home.arpa`) or an IPv4/IPv6 address. */
const HOST_VALUE = /^(\*\.)?([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z][-a-z0-9]{0,62}[a-z0-9]\.?$/i;
const IPV4 = /^(\d{1,3}\.){3}\d{1,3}(\/\d{1,2})?$/;
const IPV6 = /^[0-9a-f:]{2,39}(\/\d{1,3})?$/i;
const EMAIL_VALUE = /^[^\s@]{1,64}@([a-z0-9-]+\.)+[a-z]{2,}$/i;
const PLAIN_VALUE = /^(\d{1,10}|true|false|yes|no|on|off|null)$/i;
const URL_VALUE = /^[a-z][a-z0-9+.-]*:\/\/[^\s/@?#]+(\/[^\s?#@]*)?$/i;

/** A value that is a host, domain, IP address or e-mail (recognised as what it is, whatever the key says). */
export function isAddressValue(value: string): boolean {
  const v = value.trim();
  if (v.length === 0 || v.length > 253 || /\s/.test(v)) return false;
  return HOST_VALUE.test(v) || IPV4.test(v) || (v.includes(':') && IPV6.test(v)) || EMAIL_VALUE.test(v);
}

/**
 * A value that is a file or a structured document rather than one credential: several lines,
 * PEM, a JSON object or array, YAML, TOML or INI.
 */
export function isStructuredValue(value: string): boolean {
  const v = value.trim();
  if (v.includes('\n')) return true;
  if (/^-----BEGIN [A-Z0-9 ]+-----/.test(v)) return true;
  if (/^[[{]/.test(v)) {
    try {
      const parsed: unknown = JSON.parse(v);
      return typeof parsed === 'object' && parsed !== null;
    } catch {
      return false;
    }
  }
  return false;
}

/** A single-line value that names no credential: a number, a boolean, a URL without user information or query. */
const isPlainValue = (value: string) => PLAIN_VALUE.test(value.trim()) || URL_VALUE.test(value.trim());

/**
 * What a key holds. `value` is its readable value (undefined when it is encrypted: only the name
 * and the object then decide); `isFile` says the object declares it a whole file (a generator's
 * `files:` entry).
 */
export function keyKind(key: string, value: string | undefined, isFile = false): KeyKind {
  const readable = value !== undefined && value.length > 0;
  if (isFile || FILE_KEY.test(key) || (readable && isStructuredValue(value))) return 'file';
  if (readable && isAddressValue(value)) return 'address';
  const words = withoutSecretPrefix(nameWords(key));
  const thirdParty = THIRD_PARTY.test(words);
  const owned = OWNED.test(words);
  if (ADDRESS.test(words) && !SECRET_WORD.test(words)) return 'address';
  if (thirdParty) return 'third-party';
  if (owned) return 'owned';
  if (USER.test(words)) return 'user';
  if ((readable && isPlainValue(value)) || CONFIG.test(words) || SETTING.test(words)) return 'plain';
  return 'unknown';
}
