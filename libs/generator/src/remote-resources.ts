/**
 * Kustomize fetches what a kustomization names by URL (an HTTP GET for a file URL, a `git clone` for a
 * repository): from a reference or a target repository, that would let a file in git make the
 * service connect anywhere. Every build is checked first, and a remote entry refuses the build,
 * naming the file; only paths in the repository are built (a local entry that leads out of it, by
 * `..` or a symbolic link, is refused too).
 */
import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { isScalar, parseAllDocuments, visit } from 'yaml';
import { GeneratorInputError } from './errors';
import { readRepoFile } from './repo-files';

/** kustomize's file names for a kustomization, all of which it reads. */
const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

/** Any URL scheme: http(s)://, ssh://, git://, file:// (a go-getter source too). */
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** go-getter's forced source (`git::https://...`, `s3::`), and kustomize's old GitHub alias `gh:`. */
const FORCED_GETTER = /^([a-z0-9+.-]+::|gh:)/i;
/** scp-like ssh (`git@github.com:org/repo`). */
const SCP_LIKE = /^[^\s/@:]+@[^\s/:]+:/;
/** A host name as first segment (`github.com/org/repo`, `gitlab.example.org:8443/x`): kustomize's shorthand for a repository. */
const HOST_FIRST = /^([a-z0-9-]+\.)+([a-z]{2,})(:\d+)?\//i;
/** An IPv4 address as first segment (`127.0.0.1:8080/x`). */
const ADDRESS_FIRST = /^\d{1,3}(\.\d{1,3}){3}(:\d+)?\//;
/** Extensions of files, which a first segment of a local path may carry where a host name has its top-level domain. */
const FILE_EXTENSION = /^(ya?ml|json)$/i;
/** The query parameters of a remote base (`?ref=v1`, `?version=`, `?timeout=`, `?submodules=`). */
const REMOTE_QUERY = /\?(ref|version|timeout|submodules)=/i;

/**
 * Whether kustomize would fetch this entry instead of reading a local path. Conservative: a local
 * folder whose name looks like a host name (`charts.example.com/`) counts as remote too. Inline
 * content (a patch spread over lines) is not a location.
 */
export function isRemoteReference(entry: string): boolean {
  const text = entry.trim();
  if (text.includes('\n')) return false;
  if (
    URL_SCHEME.test(text) ||
    FORCED_GETTER.test(text) ||
    SCP_LIKE.test(text) ||
    REMOTE_QUERY.test(text) ||
    ADDRESS_FIRST.test(text)
  )
    return true;
  const host = HOST_FIRST.exec(text);
  return host !== null && !FILE_EXTENSION.test(host[2]);
}

/** The refusal of a remote entry, naming the kustomization file it is in. */
export function remoteResourceError(file: string, field: string, entry: string): GeneratorInputError {
  return new GeneratorInputError(
    `${file}: ${field} entry ${JSON.stringify(entry)} is a remote resource, which kustomize would fetch; only paths in the repository are built`,
  );
}

/** One location a kustomization names, with the field it is in (for the message). */
interface Location {
  field: string;
  value: string;
  /** Whether kustomize may read it as a folder with its own kustomization (then it is checked too). */
  folder: boolean;
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
const objects = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : [];

/** Folders or files of other kustomizations (resources, components, bases). */
const FOLDER_LISTS = ['resources', 'components', 'bases'];
/** Lists of files (or inline documents) kustomize loads. */
const FILE_LISTS = ['crds', 'configurations', 'patchesStrategicMerge'];
/** Lists of plugin configurations: files of them, or inline YAML; what each configuration loads is checked too. */
const PLUGIN_LISTS = ['generators', 'transformers', 'validators'];
/** Lists whose items name a file in `path`. */
const PATH_ITEM_LISTS = ['patches', 'patchesJson6902', 'replacements'];
/** Generators whose items name files (`key=path` or `path`) and env files. */
const GENERATOR_LISTS = ['configMapGenerator', 'secretGenerator'];

/**
 * kustomize decodes a kustomization with Go's encoding/json, which matches field names without regard
 * to case and with Unicode simple folding: `Resources`, `RESOURCES` and `reſources` (long s) all fill
 * `resources`. A field is looked up the same way here, in every key that folds to its name, so no
 * spelling of it goes unchecked (the Kelvin sign lowercases to k; the long s needs mapping to s).
 */
const fold = (name: string) => name.toLowerCase().replaceAll('\u017f', 's');

/** The values of every key of `obj` that Go's decoder would take for the field `name`. */
const fieldValues = (obj: Record<string, unknown>, name: string): unknown[] => {
  const wanted = fold(name);
  return Object.entries(obj)
    .filter(([key]) => fold(key) === wanted)
    .map(([, value]) => value);
};
const stringsIn = (obj: Record<string, unknown>, name: string) => fieldValues(obj, name).flatMap(strings);
const objectsIn = (obj: Record<string, unknown>, name: string) => fieldValues(obj, name).flatMap(objects);

/** Every location a kustomization makes kustomize load (see kustomize's types.Kustomization). */
function locations(k: Record<string, unknown>): Location[] {
  const found: Location[] = [];
  const add = (field: string, values: string[], folder = false) =>
    found.push(...values.map((value) => ({ field, value, folder })));
  for (const field of FOLDER_LISTS) add(field, stringsIn(k, field), true);
  for (const field of FILE_LISTS) add(field, stringsIn(k, field));
  for (const field of PATH_ITEM_LISTS)
    for (const item of objectsIn(k, field)) add(`${field}[].path`, stringsIn(item, 'path'));
  for (const field of GENERATOR_LISTS) {
    for (const item of objectsIn(k, field)) {
      add(
        `${field}[].files`,
        stringsIn(item, 'files').map((f) => f.slice(f.indexOf('=') + 1)),
      );
      add(`${field}[].envs`, [...stringsIn(item, 'envs'), ...stringsIn(item, 'env')]);
    }
  }
  for (const item of objectsIn(k, 'helmCharts')) {
    add('helmCharts[].repo', stringsIn(item, 'repo'));
    add('helmCharts[].valuesFile', stringsIn(item, 'valuesFile'));
    add('helmCharts[].additionalValuesFiles', stringsIn(item, 'additionalValuesFiles'));
  }
  for (const globals of fieldValues(k, 'helmGlobals'))
    if (globals && typeof globals === 'object' && !Array.isArray(globals))
      for (const field of ['chartHome', 'configHome'])
        add(`helmGlobals.${field}`, stringsIn(globals as Record<string, unknown>, field));
  for (const item of objectsIn(k, 'helmChartInflationGenerator'))
    add('helmChartInflationGenerator[].chartRepoUrl', stringsIn(item, 'chartRepoUrl'));
  for (const openapi of fieldValues(k, 'openapi'))
    if (openapi && typeof openapi === 'object' && !Array.isArray(openapi))
      add('openapi.path', stringsIn(openapi as Record<string, unknown>, 'path'));
  return found;
}

/**
 * The plugins kubectl's kustomize runs (apiVersion `builtin`): any other configuration is an exec or
 * container plugin, which kubectl refuses to run; it is refused here first, naming the file.
 */
const BUILTIN_PLUGINS = new Set([
  'AnnotationsTransformer',
  'ConfigMapGenerator',
  'HashTransformer',
  'HelmChartInflationGenerator',
  'IAMPolicyGenerator',
  'ImageTagTransformer',
  'LabelTransformer',
  'NamespaceTransformer',
  'PatchJson6902Transformer',
  'PatchStrategicMergeTransformer',
  'PatchTransformer',
  'PrefixSuffixTransformer',
  'PrefixTransformer',
  'ReplacementTransformer',
  'ReplicaCountTransformer',
  'SecretGenerator',
  'SortOrderTransformer',
  'SuffixTransformer',
  'ValueAddTransformer',
]);

/**
 * Fields of a builtin plugin's configuration that name files or folders kustomize loads (a generator's
 * `files` and `envs`, a patch's `path`, a chart's values): at any depth, matched as Go's decoder
 * matches them. Conservative: a field path (`fieldSpecs[].path: metadata/labels`) is checked too,
 * and such a path is always a local one.
 */
const PLUGIN_LOCATION_FIELDS = new Set(
  [
    'files',
    'envs',
    'env',
    'path',
    'paths',
    'valuesFile',
    'additionalValuesFiles',
    'chartHome',
    'configHome',
    'repo',
    'chartRepoUrl',
  ].map(fold),
);

/** Every location a plugin configuration names, with where it is (`files` entries as `key=path` give the path). */
function pluginLocations(config: unknown, at: string): Location[] {
  if (Array.isArray(config)) return config.flatMap((item, i) => pluginLocations(item, `${at}[${i}]`));
  if (!config || typeof config !== 'object') return [];
  return Object.entries(config).flatMap(([key, value]) => {
    const field = `${at}.${key}`;
    if (!PLUGIN_LOCATION_FIELDS.has(fold(key))) return pluginLocations(value, field);
    const values = fold(key) === 'files' ? strings(value).map((f) => f.slice(f.indexOf('=') + 1)) : strings(value);
    return values.map((v) => ({ field, value: v, folder: false }));
  });
}

/** The plugin configurations of one entry of `generators`, `transformers` or `validators`: inline YAML, or a file of them. */
function pluginConfigs(
  entry: string,
  dir: string,
  file: string,
  field: string,
  shown: (abs: string) => string,
): unknown[] {
  if (entry.includes('\n')) return readDocuments(entry, `${shown(file)}: ${field} entry (inline)`);
  const local = resolve(dir, entry.trim());
  if (isFolder(local))
    throw new GeneratorInputError(
      `${shown(file)}: ${field} entry ${JSON.stringify(entry)} is a folder, whose build kustomize would take as plugin configurations; only files of them are built`,
    );
  return isFile(local) ? readDocuments(readRepoFile(dirname(local), basename(local), 'utf8'), shown(local)) : [];
}

/** Refuses a plugin configuration kubectl would not run as a builtin, naming where it is. */
function refuseUnknownPlugin(config: unknown, where: string): void {
  const body = (config ?? {}) as Record<string, unknown>;
  const [apiVersion, kind] = [body.apiVersion, body.kind];
  if (apiVersion !== 'builtin' || typeof kind !== 'string' || !BUILTIN_PLUGINS.has(kind))
    throw new GeneratorInputError(
      `${where}: plugin configuration ${JSON.stringify(`${String(apiVersion)}/${String(kind)}`.slice(0, 80))} is not one of kustomize's builtin plugins; only those are built`,
    );
}

/** The kustomization's body. One kustomize cannot be sure to read as this parser does is refused rather than skipped. */
function readKustomization(file: string, shown: (abs: string) => string): Record<string, unknown> {
  const [body, ...more] = readAsKustomizeReads(readRepoFile(dirname(file), basename(file), 'utf8'), shown(file));
  if (more.length > 0)
    throw new GeneratorInputError(`${shown(file)}: holds more than one YAML document, so it is not built`);
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** Every document of a YAML text (plugin configurations), read as a kustomization is. */
function readDocuments(text: string, where: string): unknown[] {
  return readAsKustomizeReads(text, where).filter((body) => body !== null && body !== undefined);
}

/**
 * Characters Go's YAML 1.1 reader (kustomize's) takes as line breaks and this parser does not: a
 * `# comment<U+2028>resources: [...]` is a comment here and a field there.
 */
const GO_ONLY_LINE_BREAKS = /[\u0085\u2028\u2029]/;
/** Tags both readers resolve alike; any other (`!!binary`, which Go decodes to a string this parser does not see, custom tags) is refused. */
const PLAIN_TAGS = new Set(['str', 'seq', 'map', 'int', 'float', 'bool', 'null'].map((t) => `tag:yaml.org,2002:${t}`));

/**
 * The documents of a kustomization or plugin configuration, where this parser and kustomize's are sure
 * to read the same: a text in which they could differ (Go-only line breaks, tags other than the plain
 * ones, merge keys, which Go lets override a key written before them) is refused, naming `where`,
 * rather than read one way here and another way by the build. Bounded: at most 1000 aliases.
 */
function readAsKustomizeReads(text: string, where: string): unknown[] {
  const refuse = (why: string) =>
    new GeneratorInputError(`${where}: ${why}, which kustomize may read otherwise, so it is not built`);
  if (GO_ONLY_LINE_BREAKS.test(text)) throw refuse('holds a line break only YAML 1.1 knows (U+0085, U+2028, U+2029)');
  const docs = parseAllDocuments(text, { merge: false, uniqueKeys: false });
  if (!Array.isArray(docs) || docs.some((doc) => doc.errors.length > 0)) throw refuse('cannot be read as YAML');
  for (const doc of docs)
    visit(doc, {
      Node(_, node) {
        if (node.tag && !PLAIN_TAGS.has(node.tag)) throw refuse(`holds a value tagged ${node.tag.slice(0, 40)}`);
      },
      Pair(_, pair) {
        if (isScalar(pair.key) && pair.key.value === '<<') throw refuse('holds a merge key (<<)');
      },
    });
  try {
    return docs.map((doc) => doc.toJS({ maxAliasCount: 1000 }) as unknown);
  } catch {
    throw refuse('holds more aliases than it can be read with');
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Where a path really is: symbolic links on the way resolved, for as much of it as exists (the rest
 * as written). kustomize follows links and `..` alike, and loads a folder with a kustomization from
 * anywhere on the machine (its load restrictor only keeps files under each kustomization's root).
 */
export function realLocation(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realLocation(parent), basename(path));
  }
}

/** The refusal of a local entry that leads out of the repository (`..`, or a symbolic link). */
function outsideError(file: string, field: string, entry: string): GeneratorInputError {
  return new GeneratorInputError(
    `${file}: ${field} entry ${JSON.stringify(entry)} leads outside the repository; only paths in the repository are built`,
  );
}

/** Whether `path`, links resolved, lies in one of `roots` (links resolved too). */
export function insideRoots(path: string, roots: readonly string[]): boolean {
  const real = realLocation(path);
  return roots.map(realLocation).some((root) => real === root || real.startsWith(root + sep));
}

/**
 * Refuses a build whose kustomization, or any local kustomization it pulls in, names a remote
 * resource, or a local one that really lies outside `roots` (the working copy, and the scratch
 * folder a build is assembled in): a target repository's `../../..` or link to another folder on
 * this machine (another run's working copy, the service's own files). `shown` turns a file's
 * absolute path into the name the message gives it.
 */
export function refuseRemoteResources(
  buildDir: string,
  shown: (absFile: string) => string,
  roots: readonly string[],
): void {
  const inside = (path: string) => insideRoots(path, roots);
  if (!inside(buildDir))
    throw new GeneratorInputError(
      `${shown(buildDir)}: leads outside the repository; only paths in the repository are built`,
    );
  const seen = new Set<string>();
  const visit = (dir: string) => {
    const real = realpathSync(dir);
    if (seen.has(real)) return;
    seen.add(real);
    for (const name of KUSTOMIZATION_FILES) {
      const file = join(dir, name);
      if (!isFile(file)) continue;
      if (!inside(file))
        throw new GeneratorInputError(
          `${shown(file)}: leads outside the repository; only paths in the repository are built`,
        );
      const kustomization = readKustomization(file, shown);
      const check = ({ field, value, folder }: Location) => {
        if (isRemoteReference(value)) throw remoteResourceError(shown(file), field, value);
        if (value.includes('\n')) return; // inline content, not a location
        const local = resolve(dir, value.trim());
        if (!inside(local)) throw outsideError(shown(file), field, value);
        if (folder && isFolder(local)) visit(local);
      };
      locations(kustomization).forEach(check);
      for (const field of PLUGIN_LISTS)
        for (const entry of stringsIn(kustomization, field)) {
          check({ field, value: entry, folder: false });
          for (const config of pluginConfigs(entry, dir, file, field, shown)) {
            refuseUnknownPlugin(config, `${shown(file)}: ${field} entry`);
            pluginLocations(config, `${field}[].${String((config as { kind?: unknown }).kind)}`).forEach(check);
          }
        }
    }
  };
  visit(buildDir);
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
