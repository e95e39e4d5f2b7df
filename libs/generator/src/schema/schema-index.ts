/**
 * Where the schema of a kind comes from: the compiled validators of the kubernetes-models packages
 * (Kubernetes built-ins, Flux, cert-manager, Gateway API, sealed-secrets, Prometheus Operator), found
 * by reading each package's model classes once (each names its apiVersion, kind and validator file),
 * and loaded on first use of the kind, so a process pays only for the kinds its trees hold.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** An ajv standalone validator as the packages compile them: errors on `.errors` after a false return. */
export type CompiledValidator = ((data: unknown) => boolean) & { errors?: SchemaError[] | null };

export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, any>;
  message?: string;
}

/** The packages read, in the order a kind is looked up; their versions are the schema versions (docs/generator.md). */
export const SCHEMA_PACKAGES = [
  'kubernetes-models',
  '@kubernetes-models/flux-cd',
  '@kubernetes-models/cert-manager',
  '@kubernetes-models/gateway-api',
  '@kubernetes-models/sealed-secrets',
  '@kubernetes-models/prometheus-operator',
] as const;

/** `static{this.apiVersion="apps/v1"}static{this.kind="Deployment"}` and the validator it imports, as every model class file holds them. */
const MODEL_CLASS =
  /import\{validate\}from"([^"]+\/_schemas\/[^"]+\.js)".*?static\{this\.apiVersion="([^"]+)"\}static\{this\.kind="([^"]+)"\}/s;

interface IndexedKind {
  file: string;
  validator?: CompiledValidator;
}

export const kindKey = (apiVersion: string, kind: string) => `${apiVersion}/${kind}`;

/** The installed package's folder: found by walking up from here (the packages export no CommonJS paths to resolve). */
export function packageRoot(name: string, from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`schema package ${name} is not installed`);
  }
}

function modelFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory())
      return entry.name === '_schemas' || entry.name === 'node_modules' ? [] : modelFiles(join(dir, entry.name));
    return entry.name.endsWith('.js') && entry.name !== 'index.js' ? [join(dir, entry.name)] : [];
  });
}

function buildIndex(): Map<string, IndexedKind> {
  const kinds = new Map<string, IndexedKind>();
  for (const name of SCHEMA_PACKAGES) {
    for (const file of modelFiles(packageRoot(name))) {
      const found = modelClass(file);
      if (found && !found.kind.endsWith('List') && !kinds.has(kindKey(found.apiVersion, found.kind)))
        kinds.set(kindKey(found.apiVersion, found.kind), { file: found.validatorFile });
    }
  }
  return kinds;
}

function modelClass(file: string): { apiVersion: string; kind: string; validatorFile: string } | undefined {
  const match = MODEL_CLASS.exec(readFileSync(file, 'utf8'));
  return match ? { validatorFile: resolve(dirname(file), match[1]), apiVersion: match[2], kind: match[3] } : undefined;
}

/**
 * A kind's model class where the packages keep it (`<group>/<version>/<Kind>.js`, the core group as
 * `<version>/<Kind>.js`), checked against what the file declares: a lookup reads one file per
 * package, not the whole index (a pass's first check would otherwise read some 2,000 files).
 */
function findKind(apiVersion: string, kind: string): IndexedKind | null {
  if (!/^([a-z0-9][a-z0-9.-]*\/)?v[0-9][0-9a-z]*$/.test(apiVersion) || !/^[A-Za-z0-9]+$/.test(kind)) return null;
  for (const name of SCHEMA_PACKAGES) {
    const file = join(packageRoot(name), apiVersion, `${kind}.js`);
    const found = existsSync(file) ? modelClass(file) : undefined;
    if (found && found.apiVersion === apiVersion && found.kind === kind) return { file: found.validatorFile };
  }
  return null;
}

const lookedUp = new Map<string, IndexedKind | null>();

function lookUp(apiVersion: string, kind: string): IndexedKind | null {
  const key = kindKey(apiVersion, kind);
  if (!lookedUp.has(key)) lookedUp.set(key, findKind(apiVersion, kind));
  return lookedUp.get(key)!;
}

/** Whether a package has the kind's schema (without loading it). */
export const hasPackagedSchema = (apiVersion: string, kind: string) => lookUp(apiVersion, kind) !== null;

/** The validator of a kind, or undefined when no package has its schema. */
export function packagedValidator(apiVersion: string, kind: string): CompiledValidator | undefined {
  const entry = lookUp(apiVersion, kind);
  if (!entry) return undefined;
  // An ES module loaded through require(esm): the validator files have no top-level await.
  entry.validator ??= require(entry.file).validate as CompiledValidator;
  return entry.validator;
}

/** Every kind the packages describe (the docs count them; a test checks each is found by packagedValidator). */
export function packagedKinds(): string[] {
  return [...buildIndex().keys()];
}
