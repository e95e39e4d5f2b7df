/**
 * Field rules shared by the command line, the REST API and the NATS API, so that every edge
 * accepts and refuses exactly the same values.
 */
export type FieldCheck = (value: unknown) => string | null;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const isClusterName: FieldCheck = (v) =>
  typeof v !== 'string'
    ? 'must be a string'
    : v.length > 63 || !DNS_LABEL.test(v)
      ? 'must be a DNS-1123 label (lowercase letters, digits and "-", at most 63 characters, starting and ending alphanumeric)'
      : null;

export const isDomain: FieldCheck = (v) => {
  if (typeof v !== 'string') return 'must be a string';
  const labels = v.split('.');
  const ok =
    v.length <= 253 &&
    labels.length >= 2 &&
    labels.every((l) => l.length > 0 && l.length <= 63 && DNS_LABEL.test(l)) &&
    /[a-z]/.test(labels[labels.length - 1]);
  return ok ? null : 'must be a lowercase DNS name with at least two labels (for example apps.example.com)';
};

export const isRegion: FieldCheck = (v) =>
  typeof v !== 'string'
    ? 'must be a string'
    : /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/.test(v)
      ? null
      : 'must be a cloud region name (lowercase letters, digits and "-", for example eu-west-1)';

const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;

export const isEmail: FieldCheck = (v) =>
  typeof v !== 'string'
    ? 'must be a string'
    : v.length <= 254 && EMAIL.test(v) && !/['`${}|]/.test(v)
      ? null
      : 'must be a plain e-mail address (local@domain, no quotes, spaces or shell/YAML metacharacters)';

/** A reference environment name is a folder under clusters/: one DNS label, never a path. */
export const isEnvName: FieldCheck = (v) =>
  typeof v === 'string' && v.length <= 63 && DNS_LABEL.test(v) ? null : 'must be a DNS-1123 label';

/** One folder of a repository-relative path: a letter or digit first (no hidden folder, no `.` or `..`). */
const PATH_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const MAX_ENV_PATH = 200;
const MAX_ENV_DEPTH = 6;

/**
 * A reference environment: a name under clusters/ (`dev`), or the repository-relative folder of the
 * environment (`kubernetes/main`, `kubernetes`), in the spelling normaliseReferenceEnv gives it, bounded,
 * never absolute, never `..`, never a hidden folder. A one-segment value is a DNS label: the generator
 * reads it as clusters/<name>, or as a folder at the root (`kubernetes`) when the reference has no such
 * environment under clusters/.
 */
export const isReferenceEnv: FieldCheck = (v) => {
  if (typeof v !== 'string') return 'must be a string';
  if (!v.includes('/')) return isEnvName(v);
  const parts = v.split('/');
  const ok = v.length <= MAX_ENV_PATH && parts.length <= MAX_ENV_DEPTH && parts.every((p) => PATH_SEGMENT.test(p));
  return ok
    ? null
    : `must be a DNS-1123 label (an environment under clusters/) or a repository-relative folder such as kubernetes/main (at most ${MAX_ENV_DEPTH} folders of letters, digits, ".", "_", "-", none hidden, no "..", not absolute, at most ${MAX_ENV_PATH} characters)`;
};

/**
 * The one spelling of a repository folder given as a reference environment: `./kubernetes`, `kubernetes/` and
 * `kubernetes//main` are how people write `kubernetes` and `kubernetes/main`, not other environments. Only `.`
 * and empty folders are dropped; an absolute path or `..` is left as it is, for isReferenceEnv to refuse.
 */
export function normaliseReferenceEnv<T>(v: T): T | string {
  if (typeof v !== 'string' || v.startsWith('/') || !v.includes('/')) return v;
  const kept = v.split('/').filter((part) => part !== '' && part !== '.');
  return kept.length > 0 ? kept.join('/') : v;
}

/** A host name an Ingress, route or certificate may carry: DNS labels, optionally a leading wildcard; one label is allowed (podinfo.staging is two). */
export const isHostName: FieldCheck = (v) => {
  if (typeof v !== 'string') return 'must be a string';
  const labels = (v.startsWith('*.') ? v.slice(2) : v).split('.');
  const ok = v.length <= 253 && labels.every((l) => l.length > 0 && l.length <= 63 && DNS_LABEL.test(l));
  return ok
    ? null
    : `${JSON.stringify(v.slice(0, 80))} is not a lowercase host name (DNS labels, optionally starting with "*.")`;
};
export { printableLine, printableText } from './printable';
