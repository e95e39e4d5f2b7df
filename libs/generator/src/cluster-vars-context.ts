/** What the cluster-vars model's passes share: the pass's context, where a reference path lands, the variables a Kustomization substitutes. */
import { ClusterVarsReference, isInEnv, VarsKustomization } from './cluster-vars-reference';
import { valueByKeyName } from './cluster-values';
import { Context } from './context';
import { ReferenceObject } from './reference';
import { ReferenceValues } from './shared-values';

export interface VarsContext extends Context {
  ref: ClusterVarsReference;
  /** The new cluster's variables. */
  vars: Record<string, string>;
  /** Names of the Kustomizations this pass applies. */
  applied: Set<string>;
  /** Infra pass: plain files of an opened shared folder, copied into the cluster folder (cluster-relative -> template-relative). */
  copiedFiles: Map<string, string>;
  /** What names the reference cluster: whatever of it the new cluster still applies is a warning. */
  referenceValues: ReferenceValues;
}

/** Where the infra pass puts plain files of a shared folder it opens: kustomize loads no file outside a kustomization's folder. */
export const FIRST_PASS_COPIES = 'infra-pass-files';

export type Substitution = Pick<VarsKustomization, 'substituteFrom' | 'substitute'>;

export const substitutes = (k: Substitution) => k.substituteFrom.length > 0 || Object.keys(k.substitute).length > 0;

/** The variables a Kustomization substitutes for the new cluster, or undefined when a source is outside what the generator can see. */
export function variablesFor(ctx: VarsContext, k: Substitution): Record<string, string> | undefined {
  let vars: Record<string, string> = {};
  for (const source of k.substituteFrom) {
    if (source.kind === 'ConfigMap' && source.name === ctx.ref.vars.object.name) {
      vars = { ...vars, ...ctx.vars };
      continue;
    }
    const found = ctx.ref.applied.find((o) => o.kind === source.kind && o.name === source.name && !o.shared);
    if (found)
      vars = {
        ...vars,
        ...Object.fromEntries(
          Object.keys({ ...found.body.data, ...found.body.stringData }).map((key) => [
            key,
            (found.kind === 'Secret' ? clusterValuesOf(ctx, found)[key] : undefined) ?? '',
          ]),
        ),
      };
    else if (!source.optional) return undefined;
  }
  return { ...vars, ...k.substitute };
}

/**
 * What a Secret the cluster's Kustomizations substitute from (cluster-template's SOPS-encrypted
 * cluster-secrets) holds of the cluster's values rather than credentials, known by key name
 * (SECRET_DOMAIN, SECRET_ACME_EMAIL, ...): the new cluster's, since the reference's are unreadable.
 */
export function clusterValuesOf(ctx: VarsContext, secret: ReferenceObject): Record<string, string> {
  const substituted = ctx.ref.entrySecrets.some((e) => e.file === secret.file && e.index === secret.index);
  if (secret.kind !== 'Secret' || !substituted) return {};
  const keys = Object.keys({ ...secret.body.data, ...secret.body.stringData });
  return Object.fromEntries(
    keys.flatMap((key) => {
      const value = valueByKeyName(key, ctx.opts);
      return value === undefined ? [] : [[key, value]];
    }),
  );
}

/** A reference path as the new cluster sees it: the environment folder becomes the cluster folder. */
export function clusterPath(ctx: VarsContext, path: string): string {
  return isInEnv(ctx.ref, path) ? ctx.clusterDir + path.slice(ctx.ref.envDir.length) : path;
}
