/**
 * What the programs this service starts may reach: git only over the protocols the settings allow,
 * never following a redirect; build programs (kubectl kustomize) nothing at all. Set through the
 * environment, so it holds for every program they start in turn (kustomize runs git itself).
 */

/** One git configuration entry (key, value). */
export type GitConfigEntry = readonly [string, string];

/** A redirect would let an allowed server send git to any other host (GIT_ALLOWED_HOSTS checks only the URL given). */
export const NO_REDIRECTS: GitConfigEntry = ['http.followRedirects', 'false'];

/** protocol.allow=never, then each protocol allowed: git refuses every other transport, a submodule's or a redirect's too. */
export function onlyProtocols(protocols: readonly string[]): GitConfigEntry[] {
  return [['protocol.allow', 'never'], ...protocols.map((p): GitConfigEntry => [`protocol.${p}.allow`, 'always'])];
}

/**
 * Configuration entries as git reads them from the environment (GIT_CONFIG_COUNT, _KEY_n, _VALUE_n):
 * they win over every configuration file and reach git's children. GIT_ALLOW_PROTOCOL, when given,
 * is git's older switch for the same list and overrides protocol.allow, so it is set to agree.
 */
export function gitConfigEnvironment(
  entries: readonly GitConfigEntry[],
  allowProtocols?: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length), GIT_TERMINAL_PROMPT: '0' };
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  if (allowProtocols) env.GIT_ALLOW_PROTOCOL = allowProtocols.join(':');
  return env;
}

/**
 * A proxy that leads nowhere: port 9 (discard) on loopback, where nothing listens. Programs that
 * honour the proxy variables (curl in git, Go's HTTP client in kubectl) then cannot reach a server;
 * NO_PROXY is emptied so no host is exempt. Go's client still goes direct to loopback addresses,
 * which is why remote resources are refused before a build (see refuseRemoteResources).
 */
export const UNREACHABLE_PROXY = 'http://127.0.0.1:9';
const PROXY_VARIABLES = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'FTP_PROXY',
  'ftp_proxy',
];

/**
 * The environment of a build program (kubectl kustomize): every proxy unreachable, and git (which
 * kustomize starts for a remote base) allowed no protocol at all, `file` included: nothing a build
 * legitimately needs comes through git, and `file://` would reach any repository on the machine.
 */
export function offlineBuildEnvironment(): Record<string, string> {
  const proxies = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, UNREACHABLE_PROXY]));
  return {
    ...proxies,
    NO_PROXY: '',
    no_proxy: '',
    ...gitConfigEnvironment([...onlyProtocols([]), NO_REDIRECTS], []),
  };
}
