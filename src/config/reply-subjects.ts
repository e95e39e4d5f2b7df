/**
 * Which reply subjects the NATS request/reply API answers on. A request names its own reply subject,
 * and the service publishes its answer there with the service's rights: a reply subject of
 * `$JS.API.STREAM.PURGE.SCAFFOLD_EVENTS` or `scaffold.input.<id>.sealing-cert` would turn any caller
 * into a JetStream administrator or a run's input writer. So only a caller's inbox is answered.
 */

/**
 * The inbox prefixes of the callers: `_INBOX_controller` is the controller role of deploy/nats (the
 * only role that may publish `scaffolds.v1.>`), `_INBOX` what nats.js, the Go client and the nats CLI
 * use unless told otherwise (development and tests; deploy/nats does not let the service publish there).
 */
export const DEFAULT_REPLY_PREFIXES = ['_INBOX_controller', '_INBOX'] as const;

/**
 * One token of a reply subject as clients make them (nuids, counters, prefixes): never a wildcard
 * (`*`, `>`), never empty, never `$` (JetStream's and the system account's subjects start with it).
 */
const TOKEN = /^[A-Za-z0-9_-]+$/;

/** True when `reply` is `<prefix>.` followed by one or more literal tokens, for one of `prefixes`. */
export function replyAllowed(reply: string, prefixes: readonly string[]): boolean {
  return prefixes.some(
    (prefix) =>
      reply.startsWith(`${prefix}.`) &&
      reply
        .slice(prefix.length + 1)
        .split('.')
        .every(isToken),
  );
}

/** True when `prefix` is usable as a reply prefix: literal tokens only. */
export function validReplyPrefix(prefix: string): boolean {
  return prefix.split('.').every(isToken);
}

function isToken(token: string): boolean {
  return TOKEN.test(token);
}
