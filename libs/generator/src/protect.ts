import { sopsEncrypt } from '#libs/sealing/sops';
import { buildSealedSecret, SEALED_BY_ANNOTATION } from '#libs/sealing';
import { Context, usesSops } from './context';
import { CredentialPlan, CredentialPlanEntry } from './credential-plan';
import { externalPlanEntries, unmovedRemoteKeys } from './external-secrets';
import { remoteKeyNamesFor } from './remote-keys';
import { referenceSecretShapes } from './secret-examples';
import { GeneratorInputError } from './errors';
import { holdsCredentials } from './filled-secrets';
import { shownKind, shownName } from './shown-values';
import type { ReferenceObject } from './reference';
import { readBodies } from './yaml-docs';
import { readRepoFileIfPresent } from './repo-files';

const sameRecipients = (a: string[], b: string[]) => [...a].sort().join(',') === [...b].sort().join(',');

/** Whether a document already in the target protects this Secret for the same certificate or the same age recipients. */
function protectsFor(ctx: Context, b: any, name: string, namespace: string): boolean {
  if (b?.metadata?.name !== name || b.metadata?.namespace !== namespace) return false;
  if (usesSops(ctx)) {
    return (
      b.kind === 'Secret' &&
      Array.isArray(b.sops?.age) &&
      sameRecipients(
        b.sops.age.map((r: any) => r.recipient),
        ctx.opts.ageRecipients ?? [],
      )
    );
  }
  return b.kind === 'SealedSecret' && b.metadata?.annotations?.[SEALED_BY_ANNOTATION] === ctx.cert!.fingerprintSha256;
}

/** The protected Secret already in the target, when it needs no change (same key material, no rotation asked). */
function existingProtected(ctx: Context, targetFile: string, name: string, namespace: string): any | undefined {
  if (ctx.opts.rotateCredentials) return undefined;
  // A link, a device or a file over the limit is refused by name; only a file that does not parse is taken as none.
  const bytes = readRepoFileIfPresent(ctx.opts.repoDir, targetFile);
  if (!bytes) return undefined;
  try {
    return readBodies(bytes.toString('utf8'), targetFile).find((b) => protectsFor(ctx, b, name, namespace));
  } catch {
    return undefined;
  }
}

/** The Secret's new values from the credential plan, handed to the library caller (never printed). */
export function plannedValues(ctx: Context, namespace: string, name: string): Record<string, Buffer> {
  if (!ctx.plan) throw new Error('the credential plan is made before Secrets are protected');
  const data = ctx.plan.valuesFor(namespace, name);
  for (const [key, value] of Object.entries(data))
    ctx.credentials.push({ namespace, name, key, value: value.toString('utf8') });
  return data;
}

/**
 * Fresh credentials for a reference Secret, sealed for the cluster or SOPS-encrypted for its age
 * keys. `targetFile` is where it will live in the target repository (repo-relative). `assemble`
 * turns the planned values into the Secret's keys where they differ (a secretGenerator's files).
 */
export async function protectSecret(
  ctx: Context,
  targetFile: string,
  body: any,
  namespace: string,
  assemble: (planned: Record<string, Buffer>) => Record<string, Buffer> = (planned) => planned,
) {
  const name = String(body.metadata?.name);
  const sops = usesSops(ctx);
  const type = String(body.type ?? 'Opaque');
  const summary = { file: targetFile, namespace, name, type, scope: sops ? ('sops' as const) : ctx.opts.sealingScope };
  const reuse = existingProtected(ctx, targetFile, name, namespace);
  ctx.reusedSecrets.set(`${namespace}/${name}`, Boolean(reuse));
  if (reuse) {
    ctx.summary.objects_sealed.push({
      ...summary,
      keys: Object.keys((sops ? reuse.stringData : reuse.spec?.encryptedData) ?? {}).sort(),
      reused: true,
    });
    return reuse;
  }
  const data = assemble(plannedValues(ctx, namespace, name));
  ctx.summary.objects_sealed.push({ ...summary, keys: Object.keys(data).sort(), reused: false });
  const labels: Record<string, string> = { ...(body.metadata?.labels ?? {}) };
  if (!sops) return buildSealedSecret({ name, namespace, type, labels, data }, ctx.cert!, ctx.opts.sealingScope);
  const metadata: Record<string, unknown> = { name, namespace };
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  const stringData = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('utf8')]));
  return sopsEncrypt(
    { apiVersion: 'v1', kind: 'Secret', metadata, type, stringData },
    { recipients: ctx.opts.ageRecipients!, now: ctx.opts.now },
  );
}

/**
 * The credential plan of the environment whose objects are given (every plain Secret it holds),
 * recorded in the summary. A missing supplied credential stops the pass here, before anything is written.
 */
export function planCredentials(ctx: Context, objects: ReferenceObject[], referenceClusterNames: string[] = []): void {
  ctx.plan = CredentialPlan.build(referenceSecretShapes(ctx.referenceRoot, objects), {
    registry: ctx.opts.registry,
    supplied: ctx.opts.suppliedCredentials,
    requireSupplied: ctx.opts.pass === 'full' || ctx.opts.suppliedCredentials !== undefined,
  });
  ctx.remoteKeyNames = remoteKeyNamesFor(ctx, referenceClusterNames);
  const id = (e: CredentialPlanEntry) => `${e.namespace}/${e.name}/${e.key}`;
  ctx.summary.credential_plan = [...ctx.plan.entries, ...externalPlanEntries(objects, ctx.remoteKeyNames)].sort(
    (a, b) => id(a).localeCompare(id(b)),
  );
  ctx.summary.warnings.push(...ctx.plan.warnings);
  const unmoved = unmovedRemoteKeys(objects, ctx.remoteKeyNames);
  ctx.summary.remote_keys.push(...unmoved);
  for (const m of unmoved)
    ctx.summary.warnings.push(
      `${m.file}: ${m.object} ${m.field} "${m.from}" names the reference environment, but the file is shared by every cluster and is not edited: give the new cluster its own ExternalSecret (for "${m.to}")`,
    );
}

/**
 * A Secret whose derived values carry another Secret's credentials must be kept or regenerated
 * together with it: a kept SealedSecret's values cannot be read back to rebuild the other's URL.
 */
export function checkConsistentReuse(ctx: Context): void {
  for (const [id, reused] of ctx.reusedSecrets) {
    const [namespace, name] = id.split('/');
    for (const other of ctx.plan?.relatedTo(namespace, name) ?? []) {
      const otherReused = ctx.reusedSecrets.get(other);
      if (otherReused !== undefined && otherReused !== reused) {
        throw new GeneratorInputError(
          `Secret ${reused ? id : other} keeps its sealed values while ${reused ? other : id}, which shares credentials with it, gets new ones: run the full pass with --rotate-credentials to regenerate both`,
        );
      }
    }
  }
}

/**
 * A reference Secret the generator can give fresh values: a plain Secret, or a SOPS-encrypted one
 * (its key names are readable without a key; values built from others need a declared template).
 * A SealedSecret belongs to the reference's own cluster and says nothing of its keys' kinds.
 */
export function checkRegenerable(o: ReferenceObject) {
  if (o.kind === 'SealedSecret') {
    throw new GeneratorInputError(
      `${o.file} holds SealedSecret ${o.name}, sealed for the reference cluster: the new cluster could not open it. Use a reference environment with plain Secrets (such as a development cluster)`,
    );
  }
}

/**
 * What the references' secret rules share: no Secret or SealedSecret among `early` (applied by the cluster's
 * own sync in the first pass, before the cluster can open secrets), every Secret regenerable, and none in a
 * shared folder (the same for every cluster). `moveTo` and `keepIn` name, in the errors, where they belong.
 */
export function guardReferenceSecrets(
  early: readonly ReferenceObject[],
  kustomizations: readonly { objects: readonly ReferenceObject[] }[],
  where: { moveTo: string; keepIn: string },
): void {
  for (const o of early.filter(holdsCredentials)) {
    throw new GeneratorInputError(
      `${o.file} holds ${shownKind(o.kind)} ${shownName(o.name)}, applied by the cluster's own sync in the first pass, before the cluster can open secrets: move it to ${where.moveTo}`,
    );
  }
  for (const k of kustomizations) {
    for (const o of k.objects) {
      checkRegenerable(o);
      if (o.shared && o.kind === 'Secret' && holdsCredentials(o))
        throw new GeneratorInputError(
          `${o.file} is shared by every cluster and holds Secret ${shownName(o.name)}: keep secrets in ${where.keepIn}`,
        );
    }
  }
}
