/**
 * Flux's documented SOPS pattern: a kustomize `secretGenerator` over SOPS-encrypted files
 * (`envs:` of an encrypted dotenv, `files:` of `*.enc.yaml`/`*.enc.json`/binary files), which
 * kustomize-controller decrypts before it builds. The key names are readable without the reference
 * cluster's key, so each generator is read as a Secret of the credential plan (a ReferenceObject
 * with `generator` set), and written for the new cluster encrypted again (SOPS backend) or replaced
 * by a SealedSecret of the same name, namespace and type (sealed backend).
 */
import { posix } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { GeneratorInputError } from './errors';
import { formatForPath, readSopsFile, SopsFile, SopsFormat, allValuesEncrypted, encryptedLeaves } from './sops-files';
import { readRepoFile, repoPathExists } from './repo-files';

/** One encrypted file a generator reads. */
export interface GeneratorSource {
  /** `envs`: every dotenv key is a Secret key; `files`: the whole file is the value of one Secret key. */
  field: 'envs' | 'files';
  /** Repository-relative path of the encrypted file. */
  path: string;
  format: SopsFormat;
  /** `files`: the Secret key (the part before `=`, or the file's name). */
  secretKey?: string;
  file: SopsFile;
  /** The credential-plan keys this source gives: dotenv keys, the file key, or `<file key>:<leaf path>`. */
  planKeys: string[];
  /** Structured sources: the document path of each plan key. */
  leafPaths?: Map<string, Array<string | number>>;
}

export interface SecretGeneratorShape {
  /** The kustomization file declaring it (repository-relative). */
  kustomization: string;
  /** Its position in that file's secretGenerator list. */
  position: number;
  name: string;
  type: string;
  /** Whether kustomize appends a content hash to the name (references in the same build follow it). */
  hashSuffix: boolean;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  sources: GeneratorSource[];
}

const LEAF_KEY = (secretKey: string, path: Array<string | number>) => `${secretKey}:${path.join('.')}`;

/** What the reader tells a caller to do with a generator it cannot carry over. */
const SOPS_PATTERN_HINT =
  'the generator reads only SOPS-encrypted files (envs: an encrypted dotenv, files: encrypted yaml, json or binary files; see "SOPS-encrypted secretGenerator" in docs/generator.md)';

/**
 * The secretGenerator entries of a kustomization, read as the credential plan needs them. Literals
 * and plaintext files are refused (they would put a plaintext Secret in the new cluster's tree), as
 * are `behavior: merge|replace` (a change to a Secret of another kustomization) and sources outside
 * the kustomization's folder.
 */
export function readSecretGenerators(root: string, dirRel: string, kfile: string, k: any): SecretGeneratorShape[] {
  const entries = k?.secretGenerator;
  if (entries === undefined || entries === null) return [];
  if (!Array.isArray(entries)) throw new GeneratorInputError(`${kfile}: secretGenerator must be a list`);
  const common = k.generatorOptions ?? {};
  return entries.map((entry: any, position: number) => {
    const name = typeof entry?.name === 'string' ? entry.name : '';
    const where = `${kfile}: secretGenerator ${name || `#${position + 1}`}`;
    if (!name) throw new GeneratorInputError(`${where} has no name`);
    if ((entry.literals ?? []).length > 0)
      throw new GeneratorInputError(
        `${where} builds a plaintext Secret from literals, which cannot go into a repository: ${SOPS_PATTERN_HINT}, or keep a Secret manifest the generator can protect`,
      );
    if (entry.behavior !== undefined && entry.behavior !== 'create')
      throw new GeneratorInputError(
        `${where} has behavior: ${String(entry.behavior)}, which changes a Secret generated elsewhere: generate it whole in one kustomization`,
      );
    const options = { ...common, ...(entry.options ?? {}) };
    const envs = [...(entry.envs ?? []), ...(entry.env ? [entry.env] : [])];
    const sources = [
      ...envs.map((e: unknown) => readSource(root, dirRel, where, 'envs', String(e))),
      ...(entry.files ?? []).map((f: unknown) => readSource(root, dirRel, where, 'files', String(f))),
    ];
    if (sources.length === 0) throw new GeneratorInputError(`${where} has no envs or files`);
    return {
      kustomization: kfile,
      position,
      name,
      type: typeof entry.type === 'string' ? entry.type : 'Opaque',
      hashSuffix: options.disableNameSuffixHash !== true,
      labels: { ...(options.labels ?? {}) },
      annotations: { ...(options.annotations ?? {}) },
      sources,
    };
  });
}

function readSource(root: string, dirRel: string, where: string, field: 'envs' | 'files', entry: string) {
  const eq = field === 'files' ? entry.indexOf('=') : -1;
  const pathPart = eq < 0 ? entry : entry.slice(eq + 1);
  const path = posix.normalize(posix.join(dirRel, pathPart));
  if (!path.startsWith(dirRel + '/'))
    throw new GeneratorInputError(
      `${where} reads ${pathPart}, outside its folder: keep the encrypted file beside the kustomization`,
    );
  // Flux picks the format from the key for files (the name before "=", else the path) and from the path for envs.
  const secretKey = field === 'files' ? (eq < 0 ? posix.basename(pathPart) : entry.slice(0, eq)) : undefined;
  const named = formatForPath(field === 'files' ? (eq < 0 ? pathPart : secretKey!) : pathPart);
  const format: SopsFormat | 'ini' = field === 'envs' && named === 'binary' ? 'dotenv' : named;
  if (format === 'ini' || (field === 'envs' && format !== 'dotenv'))
    throw new GeneratorInputError(
      `${where}: ${field} entry ${pathPart} is ${format}, which is not read: ${SOPS_PATTERN_HINT}`,
    );
  if (!repoPathExists(root, path)) throw new GeneratorInputError(`${where} reads ${pathPart}, which does not exist`);
  const file = readSopsFile(readRepoFile(root, path, 'utf8'), format);
  if (!file || !allValuesEncrypted(file))
    throw new GeneratorInputError(
      `${where} builds a plaintext Secret from ${pathPart}, which is not SOPS-encrypted as ${format} (every value ENC[...], a MAC): ${SOPS_PATTERN_HINT}`,
    );
  return { field, path, format, ...(secretKey ? { secretKey } : {}), file, ...planKeysOf(file, secretKey) };
}

/** The plan keys of a source: one per dotenv key, the file's key for a binary file, one per leaf of a structured file. */
function planKeysOf(file: SopsFile, secretKey: string | undefined) {
  if (secretKey === undefined) return { planKeys: Object.keys(file.body) };
  if (file.format === 'binary') return { planKeys: [secretKey] };
  const leaves = file.format === 'dotenv' ? Object.keys(file.body).map((k) => [k]) : encryptedLeaves(file.body);
  const leafPaths = new Map(leaves.map((p) => [LEAF_KEY(secretKey, p), p]));
  return { planKeys: [...leafPaths.keys()], leafPaths };
}

/** The generator as a Secret the credential plan reads: encrypted (values unreadable), keys as the plan names them. */
export function generatorSecretBody(g: SecretGeneratorShape, namespace: string | undefined): any {
  const keys = g.sources.flatMap((s) => s.planKeys);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: g.name,
      ...(namespace ? { namespace } : {}),
      ...(Object.keys(g.labels).length ? { labels: g.labels } : {}),
    },
    type: g.type,
    data: Object.fromEntries(keys.map((k) => [k, ''])),
    // Read as SOPS-encrypted by the plan: key names only, templates for what must be built; a whole
    // file (binary) is never a password, whatever its key is named.
    sops: {
      generator: g.kustomization,
      files: g.sources.filter((s) => s.field === 'files' && s.format === 'binary').map((s) => s.secretKey!),
    },
  };
}

/** The plaintext content of each source, from the Secret's new values by plan key. */
export function sourceContent(
  source: GeneratorSource,
  values: Record<string, Buffer>,
): Record<string, unknown> | Buffer {
  const text = (key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`no value planned for ${key}`);
    return value.toString('utf8');
  };
  if (source.format === 'binary') return values[source.planKeys[0]];
  if (source.secretKey === undefined) return Object.fromEntries(source.planKeys.map((k) => [k, text(k)]));
  const doc = structuredClone(source.file.body);
  for (const [key, path] of source.leafPaths!) setIn(doc, path, text(key));
  return doc;
}

function setIn(doc: any, path: Array<string | number>, value: unknown) {
  let node = doc;
  for (const step of path.slice(0, -1)) node = node[step];
  node[path[path.length - 1]] = value;
}

/** A structured source's plaintext, as the file was before it was encrypted. */
function plainFile(format: SopsFormat, content: Record<string, unknown>): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify(content, null, 2) + '\n');
  if (format === 'yaml') return Buffer.from(stringifyYaml(content, { lineWidth: 0 }));
  return Buffer.from(
    Object.entries(content)
      .map(([k, v]) => `${k}=${String(v)}\n`)
      .join(''),
  );
}

/** The Secret's values as kustomize-controller would build them after decryption (for a SealedSecret). */
export function secretData(g: SecretGeneratorShape, values: Record<string, Buffer>): Record<string, Buffer> {
  const data: Record<string, Buffer> = {};
  for (const source of g.sources) {
    const content = sourceContent(source, values);
    if (Buffer.isBuffer(content)) data[source.secretKey!] = content;
    else if (source.secretKey === undefined)
      for (const [k, v] of Object.entries(content)) data[k] = Buffer.from(String(v));
    else data[source.secretKey] = plainFile(source.format, content);
  }
  return data;
}
