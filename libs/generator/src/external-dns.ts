import type { Document } from 'yaml';
import { isScalar } from 'yaml';
import { swapDomain } from './domain';
import type { ReferenceObject } from './reference';
import { rewriteStrings, ScalarContext } from './yaml-docs';

/** external-dns deployed through its Helm chart or as a plain Deployment running its image. */
export function isExternalDns(body: any): boolean {
  if (body?.kind === 'HelmRelease') return /external-dns/.test(String(body.spec?.chart?.spec?.chart ?? ''));
  if (body?.kind === 'Deployment') {
    const containers: any[] = body.spec?.template?.spec?.containers ?? [];
    return containers.some((c) => /external-dns/.test(String(c?.image ?? '')));
  }
  return false;
}

export interface ExternalDnsSettings {
  kind: string;
  name: string;
  namespace: string | undefined;
  file: string;
  domain_filters: string[];
  txt_owner_id: string | undefined;
  region: string | undefined;
}

const FLAG = /^--([a-z0-9-]+)=(.*)$/;
const REGION_ENV = /(^|_)REGION$/;

/** Reads the domain filters, owner id and region from an external-dns object, wherever it keeps them. */
export function readExternalDns(body: any, file: string): ExternalDnsSettings {
  const settings: ExternalDnsSettings = {
    kind: body.kind,
    name: body.metadata?.name,
    namespace: body.metadata?.namespace,
    file,
    domain_filters: [],
    txt_owner_id: undefined,
    region: undefined,
  };
  const visit = (node: any, key: string | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) {
        if (key === 'domainFilters' && typeof item === 'string') settings.domain_filters.push(item);
        else visit(item, undefined);
      }
    } else if (node && typeof node === 'object') {
      if (typeof node.name === 'string' && REGION_ENV.test(node.name) && typeof node.value === 'string')
        settings.region ??= node.value;
      for (const [k, v] of Object.entries(node)) {
        if (k === 'txtOwnerId' && typeof v === 'string') settings.txt_owner_id = v;
        else if (/region$/i.test(k) && typeof v === 'string') settings.region ??= v;
        else visit(v, k);
      }
    } else if (typeof node === 'string') {
      const flag = FLAG.exec(node);
      if (!flag) return;
      if (flag[1] === 'domain-filter') settings.domain_filters.push(flag[2]);
      else if (flag[1] === 'txt-owner-id') settings.txt_owner_id = flag[2];
      else if (/region/.test(flag[1])) settings.region ??= flag[2];
    }
  };
  visit(body.kind === 'HelmRelease' ? body.spec?.values : body.spec?.template?.spec?.containers, undefined);
  return settings;
}

export interface Repointing {
  referenceDomain: string;
  domain: string;
  region: string;
  clusterName: string;
}

/** Rewrites one external-dns document in place: domain filters, owner id, region and any host under the old domain. */
export function repointExternalDns(doc: Document, to: Repointing): boolean {
  return rewriteStrings(doc, (value, ctx) => rewriteExternalDnsValue(value, ctx, to));
}

function rewriteExternalDnsValue(value: string, ctx: ScalarContext, to: Repointing): string | undefined {
  const flag = FLAG.exec(value);
  if (flag) {
    if (flag[1] === 'domain-filter')
      return `--domain-filter=${swapDomain(flag[2], to.referenceDomain, to.domain) ?? to.domain}`;
    if (flag[1] === 'txt-owner-id') return `--txt-owner-id=${to.clusterName}`;
    if (/region/.test(flag[1])) return `--${flag[1]}=${to.region}`;
  }
  if (ctx.key === 'txtOwnerId') return to.clusterName;
  if (ctx.path.includes('domainFilters')) return swapDomain(value, to.referenceDomain, to.domain) ?? to.domain;
  if (typeof ctx.key === 'string' && /region$/i.test(ctx.key)) return to.region;
  if (ctx.key === 'value' && ctx.parent) {
    const name = ctx.parent.get('name', true);
    if (isScalar(name) && typeof name.value === 'string' && REGION_ENV.test(name.value)) return to.region;
  }
  return swapDomain(value, to.referenceDomain, to.domain);
}

/** Issuers: the ACME account e-mail, DNS zones and hosts move to the new domain, a route53 region to the new region. */
export function rewriteIssuer(doc: Document, to: Repointing & { acmeEmail: string }): boolean {
  return rewriteStrings(doc, (value, ctx) => {
    if (ctx.key === 'email') return to.acmeEmail;
    if (typeof ctx.key === 'string' && /region$/i.test(ctx.key)) return to.region;
    return swapDomain(value, to.referenceDomain, to.domain);
  });
}

export const isIssuer = (body: any) =>
  (body?.kind === 'ClusterIssuer' || body?.kind === 'Issuer') && /^cert-manager\.io\//.test(String(body?.apiVersion));

/** The reference domain and region, learned from the reference's external-dns configuration. */
export function discoverReferenceDns(objects: ReferenceObject[]): {
  domain?: string;
  region?: string;
  found: ExternalDnsSettings[];
} {
  const found = objects.filter((o) => isExternalDns(o.body)).map((o) => readExternalDns(o.body, o.file));
  return {
    domain: found.find((f) => f.domain_filters.length > 0)?.domain_filters[0],
    region: found.find((f) => f.region)?.region,
    found,
  };
}
