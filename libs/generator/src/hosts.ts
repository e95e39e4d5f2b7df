/**
 * Where Kubernetes objects keep host names, and how the reference's hosts move to the new
 * cluster. One table serves discovery, rewriting and validation, so a host path added here is
 * found, moved and checked everywhere.
 */
import { Document } from 'yaml';
import { swapDomain } from './domain';
import { GeneratorInputError } from './errors';
import { rewriteStrings, YamlPath } from './yaml-docs';

/** An object may name further host paths of its own (a chart with its own values layout). */
export const HOST_PATHS_ANNOTATION = 'gitops-scaffolder.io/host-paths';

/**
 * Host paths by kind: `[]` is any list index. HelmRelease paths are the common chart value
 * layouts (podinfo, bitnami, the chart starter's ingress and httpRoute).
 */
export const HOST_PATHS: Readonly<Record<string, readonly string[]>> = {
  Ingress: ['spec.rules[].host', 'spec.tls[].hosts[]'],
  HTTPRoute: ['spec.hostnames[]'],
  GRPCRoute: ['spec.hostnames[]'],
  TLSRoute: ['spec.hostnames[]'],
  Gateway: ['spec.listeners[].hostname'],
  Certificate: ['spec.dnsNames[]', 'spec.commonName'],
  HelmRelease: [
    'spec.values.ingress.hosts[].host',
    'spec.values.ingress.hosts[]',
    'spec.values.ingress.hostname',
    'spec.values.ingress.tls[].hosts[]',
    'spec.values.httpRoute.hostnames[]',
    'spec.values.tls[].hosts[]',
  ],
};

const ANY_INDEX = Symbol('any index');
type PatternToken = string | typeof ANY_INDEX;

function compile(pattern: string): PatternToken[] {
  return pattern
    .trim()
    .split('.')
    .flatMap((part) => {
      const indexed = part.endsWith('[]');
      const key = indexed ? part.slice(0, -2) : part;
      return indexed ? [key, ANY_INDEX] : [key];
    });
}

const matches = (path: YamlPath, pattern: PatternToken[]) =>
  path.length === pattern.length &&
  pattern.every((token, i) => (token === ANY_INDEX ? typeof path[i] === 'number' : path[i] === token));

/** The host paths that apply to an object (its kind's, and any its annotation adds). */
export function hostPathsFor(body: any): string[] {
  const own = String(body?.metadata?.annotations?.[HOST_PATHS_ANNOTATION] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return [...(HOST_PATHS[String(body?.kind)] ?? []), ...own];
}

/** Whether `path` (keys and list indexes from the object's root) is a host path of `kind`'s object. */
export function isHostPath(path: YamlPath, paths: string[]): boolean {
  return paths.some((p) => matches(path, compile(p)));
}

export interface HostOccurrence {
  host: string;
  /** Where it is: file and object, then the field (`podinfo-values.yaml HelmRelease podinfo/podinfo spec.values.ingress.hosts[0].host`). */
  where: string;
}

/** A path as the messages show it: `spec.values.ingress.hosts[0].host`. */
export const describePath = (path: YamlPath) =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');

/** Every host an object (or a strategic-merge patch of one) holds, with the field it is in. */
export function hostsIn(body: any, where: string): HostOccurrence[] {
  const found: HostOccurrence[] = [];
  const paths = hostPathsFor(body);
  if (paths.length === 0) return found;
  rewriteStrings(new Document(body), (value, ctx) => {
    if (isHostPath(ctx.path, paths)) found.push({ host: value, where: `${where} ${describePath(ctx.path)}` });
    return undefined;
  });
  return found;
}

/** How the reference's hosts become the new cluster's: an explicit map first, then the domain move. */
export class HostMapping {
  constructor(
    readonly domain: string,
    readonly referenceDomain: string | undefined,
    readonly hostMap: Readonly<Record<string, string>>,
  ) {}

  /** The new cluster's name for a reference host, or undefined when nothing says. */
  target(host: string): string | undefined {
    if (Object.prototype.hasOwnProperty.call(this.hostMap, host)) return this.hostMap[host];
    return this.referenceDomain ? swapDomain(host, this.referenceDomain, this.domain) : undefined;
  }

  /** A host the new cluster may serve: under its domain, or one the host map gives it. */
  isNewClusterHost(host: string): boolean {
    return swapDomain(host, this.domain, this.domain) !== undefined || Object.values(this.hostMap).includes(host);
  }

  /**
   * Refuses a reference whose hosts cannot all be moved (listing every one and where it is), and a
   * host map naming a host the reference does not have (a typo would otherwise go unnoticed).
   */
  checkCovers(occurrences: HostOccurrence[]): void {
    // A host built from a variable the generator cannot see (${...}) is Flux's to fill in.
    const unmapped = occurrences.filter(
      (o) => !o.host.includes('${') && !this.isNewClusterHost(o.host) && this.target(o.host) === undefined,
    );
    if (unmapped.length > 0) {
      const list = unmapped.map((o) => `${o.host} (${o.where})`).join('; ');
      const domain = this.referenceDomain
        ? `not under the reference domain ${this.referenceDomain}`
        : 'the reference has no domain (give --reference-domain)';
      throw new GeneratorInputError(
        `hosts with no place in the new cluster, ${domain}: ${list}. Map each with --host-map OLD=NEW (host_map in a request)`,
      );
    }
    const known = new Set(occurrences.map((o) => o.host));
    const stray = Object.keys(this.hostMap).filter((h) => !known.has(h));
    if (stray.length > 0)
      throw new GeneratorInputError(`--host-map ${stray[0]}: the reference environment has no host ${stray[0]}`);
  }
}

/** Moves every host of an object (or patch) document in place; returns whether anything changed. */
export function moveHosts(doc: Document, mapping: HostMapping): boolean {
  const paths = hostPathsFor(doc.toJS());
  if (paths.length === 0) return false;
  return rewriteStrings(doc, (value, ctx) => (isHostPath(ctx.path, paths) ? mapping.target(value) : undefined));
}
