/**
 * What a message may show of a built object. A build turns a repository (code a tenant wrote) into
 * objects, and a replacement or generator can put anything it read into any field: messages name the
 * file, the object and the field, and show a name or kind only when it has the shape Kubernetes
 * allows one (short, lower-case words), which no secret of the service's or file content keeps.
 */

/** A Kubernetes object name (DNS subdomain, at most 253 characters; shown up to 63). */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;
/** A kind: a CamelCase word. */
const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;

/** The name, or a placeholder for one that is not a Kubernetes name. */
export const shownName = (name: unknown): string =>
  typeof name === 'string' && (name === '' || OBJECT_NAME.test(name)) ? name : '(not a Kubernetes name)';

/** The kind, or a placeholder for one that is not a kind. */
export const shownKind = (kind: unknown): string =>
  typeof kind === 'string' && KIND.test(kind) ? kind : '(not a Kubernetes kind)';

/** A path in a repository (`./apps/staging`): shown when it has a path's shape and length, else a placeholder. */
export const shownPath = (path: unknown): string =>
  typeof path === 'string' && /^[\w./@+-]{1,200}$/.test(path) ? path : '(not a repository path)';
