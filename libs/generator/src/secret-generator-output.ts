/**
 * A reference's secretGenerators over SOPS files, written for the new cluster:
 * - SOPS backend: each encrypted file again, in its own format, with the new values and for the new
 *   cluster's age recipients; the kustomization is unchanged, so name hashing and the references
 *   kustomize rewrites to the hashed name keep working;
 * - sealed backend: the generator entry and its encrypted files go, a SealedSecret of the same name,
 *   namespace, type and labels comes in their place (listed in the kustomization's resources).
 *   Without a generator, kustomize leaves references to the name as written, so workloads name the
 *   Secret the controller unseals; the content hash (and the restart it forces on change) is lost,
 *   which the summary says.
 */
import { posix } from 'node:path';
import { sopsEncryptFile } from '#libs/sealing/sops';
import { Context, usesSops } from './context';
import { GeneratorInputError } from './errors';
import { plannedValues, protectSecret } from './protect';
import type { ReferenceObject } from './reference';
import { GeneratorSource, SecretGeneratorShape, secretData, sourceContent } from './secret-generators';
import { readSopsFile } from './sops-files';
import { parseDocuments } from './yaml-docs';
import { readRepoFileIfPresent } from './repo-files';

const sameRecipients = (a: string[], b: string[]) => [...a].sort().join(',') === [...b].sort().join(',');

/** The file name of the SealedSecret that replaces a generator, beside its kustomization. */
export const sealedFileFor = (name: string) => `${name}.sealedsecret.yaml`;

/**
 * Rewrites, in `files` (the new folder's files by path relative to it, rendered from the reference
 * folder `fromDir`), every generator among `objects` whose kustomization is one of those files.
 * `toDir` is the new folder (repository-relative); `defaultNamespace` the namespace a generator
 * without one ends up in.
 */
export async function renderSecretGenerators(
  ctx: Context,
  objects: ReferenceObject[],
  fromDir: string,
  toDir: string,
  files: Map<string, Buffer>,
  defaultNamespace = 'default',
): Promise<void> {
  const seen = new Set<string>();
  const generated = objects.filter(
    (o) =>
      o.generator &&
      o.file.startsWith(fromDir + '/') &&
      files.has(o.file.slice(fromDir.length + 1)) &&
      !seen.has(`${o.file}#${o.index}`) &&
      seen.add(`${o.file}#${o.index}`),
  );
  if (generated.length > 0 && ctx.opts.pass === 'infra')
    throw new GeneratorInputError(
      `${generated[0].file} generates Secret ${generated[0].name}, but the infra pass writes it: apply it through a Flux Kustomization of its own (it then goes out in the full pass)`,
    );
  const rel = (repoPath: string) => repoPath.slice(fromDir.length + 1);
  const replaced = new Map<string, SecretGeneratorShape[]>();
  for (const o of generated) {
    const g = o.generator!;
    const namespace = o.namespace ?? defaultNamespace;
    if (usesSops(ctx)) {
      for (const [path, bytes] of await encryptSources(ctx, g, namespace, fromDir, toDir)) files.set(rel(path), bytes);
      continue;
    }
    const kdir = posix.dirname(rel(g.kustomization));
    const sealedRel = posix.join(kdir, sealedFileFor(g.name));
    if (files.has(sealedRel))
      throw new GeneratorInputError(`${g.kustomization}: ${posix.join(fromDir, sealedRel)} already exists; rename it`);
    const body = { metadata: { name: g.name, labels: g.labels }, type: g.type };
    const sealed = await protectSecret(ctx, posix.join(toDir, sealedRel), body, namespace, (planned) =>
      secretData(g, planned),
    );
    files.set(sealedRel, Buffer.from(parseDocuments(JSON.stringify(sealed), sealedRel)[0].toString({ lineWidth: 0 })));
    for (const source of g.sources) files.delete(rel(source.path));
    replaced.set(g.kustomization, [...(replaced.get(g.kustomization) ?? []), g]);
    if (g.hashSuffix)
      ctx.summary.warnings.push(
        `${g.kustomization}: secretGenerator ${g.name} is replaced by SealedSecret ${namespace}/${g.name} (${posix.join(toDir, sealedRel)}); its Secret has no content-hash suffix, so workloads in the same kustomization keep naming it but are no longer restarted when it changes`,
      );
  }
  for (const [kfile, gens] of replaced) files.set(rel(kfile), withoutGenerators(files.get(rel(kfile))!, kfile, gens));
}

/**
 * The generator's encrypted files for the new cluster: kept as they are when the repository already
 * has them for the same recipients (no rotation asked), else the planned values encrypted again.
 */
async function encryptSources(
  ctx: Context,
  g: SecretGeneratorShape,
  namespace: string,
  fromDir: string,
  toDir: string,
): Promise<Map<string, Buffer>> {
  const target = (s: GeneratorSource) => posix.join(toDir, s.path.slice(fromDir.length + 1));
  const recipients = ctx.opts.ageRecipients!;
  const summary = {
    file: posix.join(toDir, g.kustomization.slice(fromDir.length + 1)),
    namespace,
    name: g.name,
    type: g.type,
    scope: 'sops' as const,
    keys: g.sources.flatMap((s) => s.planKeys).sort(),
    sources: g.sources.map(target),
  };
  const out = new Map<string, Buffer>();
  const kept = ctx.opts.rotateCredentials ? [] : g.sources.map((s) => existingFor(ctx, target(s), s, recipients));
  const reused = kept.length > 0 && kept.every((b) => b !== undefined);
  ctx.reusedSecrets.set(`${namespace}/${g.name}`, reused);
  ctx.summary.objects_sealed.push({ ...summary, reused });
  if (reused) {
    g.sources.forEach((s, i) => out.set(s.path, kept[i]!));
    return out;
  }
  const values = plannedValues(ctx, namespace, g.name);
  for (const source of g.sources)
    out.set(
      source.path,
      await sopsEncryptFile(sourceContent(source, values), source.format, { recipients, now: ctx.opts.now }),
    );
  return out;
}

/** The repository's file for a source, when it is already encrypted in the same format for the same recipients. */
function existingFor(ctx: Context, targetPath: string, s: GeneratorSource, recipients: string[]): Buffer | undefined {
  const bytes = readRepoFileIfPresent(ctx.opts.repoDir, targetPath);
  if (!bytes) return undefined;
  const file = readSopsFile(bytes.toString('utf8'), s.format);
  return file && sameRecipients(file.recipients, recipients) ? bytes : undefined;
}

/** The kustomization without the replaced generators, listing their SealedSecrets instead. */
function withoutGenerators(raw: Buffer, kfile: string, gens: SecretGeneratorShape[]): Buffer {
  const [doc] = parseDocuments(raw.toString('utf8'), kfile);
  const positions = new Set(gens.map((g) => g.position));
  const left = ((doc.toJS().secretGenerator ?? []) as unknown[]).filter((_, i) => !positions.has(i));
  if (left.length === 0) doc.delete('secretGenerator');
  else doc.set('secretGenerator', doc.createNode(left));
  const resources = (doc.toJS().resources ?? []) as unknown[];
  const kdir = posix.dirname(kfile);
  const dir = (g: SecretGeneratorShape) => posix.relative(kdir, posix.dirname(g.kustomization));
  const added = gens.map((g) => posix.join(dir(g), sealedFileFor(g.name)));
  doc.set('resources', doc.createNode([...resources, ...added.filter((a) => !resources.includes(a))]));
  return Buffer.from(doc.toString({ lineWidth: 0 }));
}
