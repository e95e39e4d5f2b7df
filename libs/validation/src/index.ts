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

/** A host name an Ingress, route or certificate may carry: DNS labels, optionally a leading wildcard; one label is allowed (podinfo.staging is two). */
export const isHostName: FieldCheck = (v) => {
  if (typeof v !== 'string') return 'must be a string';
  const labels = (v.startsWith('*.') ? v.slice(2) : v).split('.');
  const ok = v.length <= 253 && labels.every((l) => l.length > 0 && l.length <= 63 && DNS_LABEL.test(l));
  return ok
    ? null
    : `${JSON.stringify(v.slice(0, 80))} is not a lowercase host name (DNS labels, optionally starting with "*.")`;
};
