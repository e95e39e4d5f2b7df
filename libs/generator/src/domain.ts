import { GeneratorInputError } from './errors';

/**
 * Moves a host name from the reference domain to the new one, keeping its service part:
 * `api.dev.example.net` -> `api.<domain>`, `dev.example.net` -> `<domain>`, `*.dev.example.net` -> `*.<domain>`.
 * Returns undefined for a name outside the reference domain.
 */
export function swapDomain(host: string, referenceDomain: string, domain: string): string | undefined {
  const h = host.toLowerCase();
  if (h === referenceDomain) return domain;
  if (h.endsWith('.' + referenceDomain)) return h.slice(0, h.length - referenceDomain.length) + domain;
  return undefined;
}

/** The strict variant for Ingress hosts: a host outside the reference domain is an error, not a silent copy. */
export function swapIngressHost(host: string, referenceDomain: string, domain: string, where: string): string {
  const swapped = swapDomain(host, referenceDomain, domain);
  if (swapped === undefined) {
    throw new GeneratorInputError(`${where}: a host that does not end in the reference domain "${referenceDomain}"`);
  }
  return swapped;
}
