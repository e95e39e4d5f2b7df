import { isEncValue, isEncryptedGeneratedValue } from './sops-files';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, normalize, relative, resolve, sep } from 'node:path';
import { parse, stringify } from 'yaml';
import { BoxLevel, boxedCommand, boxLevel, BuildBoxError } from '#libs/git/build-box';
import { execInHelper } from '#libs/git/helper-process';
import type { GenerateSummary } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { isFluxKustomization } from './flux-sync';
import { hostsIn } from './hosts';
import { shownKind, shownName } from './shown-values';
import { findKustomizationFile, generatedResources } from './reference';
import { insideRoots, realLocation, refuseRemoteResources } from './remote-resources';
import { BuiltObject, checkSchemas, SchemaCheck } from './schema';
import { substituteObject } from './substitution';
import { parseFresh } from './yaml-docs';
import { readRepoFile } from './repo-files';
import { buildInputsDigest } from './build-inputs';
import { boundFromHeapLimit, LruByBytes } from './lru';
import { passSignal, throwIfPassAborted } from './pass-signal';

export type { BuiltObject } from './schema';

/** kubectl is started by this thread's helper process: a fork of the service would stall it (see HelperProcess). */
const run = execInHelper;

/** At most one kustomize build per core at a time in each generator thread: more only thrashes the CPU the API needs too. */
const MAX_BUILDS = Math.max(1, availableParallelism());
let running = 0;
const waiting: Array<() => void> = [];

async function withBuildSlot<T>(work: () => Promise<T>): Promise<T> {
  throwIfPassAborted();
  if (running >= MAX_BUILDS) await slotFreed(passSignal());
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Resolves when a build ends and hands this caller its slot; a pass aborted meanwhile leaves the queue at once. */
function slotFreed(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const leave = () => {
      waiting.splice(waiting.indexOf(take), 1);
      reject(signal!.reason);
    };
    const take = () => {
      signal?.removeEventListener('abort', leave);
      resolve();
    };
    waiting.push(take);
    signal?.addEventListener('abort', leave, { once: true });
  });
}
const kubectlPresent = new Map<string, Promise<boolean>>();

/** Validation never passes silently without kubectl: only turning it off (--no-validate) skips the build. */
async function requireKubectl(kubectl: string): Promise<void> {
  if (!kubectlPresent.has(kubectl))
    kubectlPresent.set(
      kubectl,
      run(kubectl, ['version', '--client']).then(
        () => true,
        (e) => e.code !== 'ENOENT',
      ),
    );
  if (!(await kubectlPresent.get(kubectl)))
    throw new GeneratorValidationError(
      'kubectl not found: the tree cannot be validated (install kubectl, or turn validation off explicitly with --no-validate)',
    );
}

const ORIGIN = 'config.kubernetes.io/origin';

/** A file's name in messages: its path below the build's label (a repository path), e.g. clusters/c/apps/../base → clusters/c/base. */
const belowLabel = (absDir: string, label: string) => (file: string) => normalize(join(label, relative(absDir, file)));

export interface BuildSettings {
  /** Folders a build may read from (the working copy, the build's scratch folder). */
  roots: readonly string[];
  kubectl?: string;
  /** A file's name in messages (default: its path below the build's label). */
  shown?: (absFile: string) => string;
  /**
   * Each object names the file it came from (kustomize's origin annotations; default). kustomize's origin
   * tracking grows faster than the layer: 10.6 s against 0.9 s without it for a layer of 50 services.
   */
  fileNames?: boolean;
}

/**
 * `kubectl kustomize DIR`: the same build Flux's kustomize-controller runs. Asynchronous, so a
 * service generating trees keeps answering its API while kustomize works. Every build passes here:
 * a kustomization naming a remote resource, or a local one outside `roots` (the working copy and the
 * build's scratch folder), is refused first (GeneratorInputError naming the file, as `shown` names
 * it), and kubectl runs offline (git for local files only, proxies to nowhere). The folder is built
 * through a wrapper asking kustomize for origin annotations, so each object knows the file it came
 * from (as `shown` names it); the annotations are taken off again.
 */
export async function kustomizeBuild(absDir: string, label: string, settings: BuildSettings): Promise<BuiltObject[]> {
  return (await kustomizeBuildAll([{ absDir, label }], settings))[0];
}

/** A folder to build and its name in messages (a repository path). */
export interface BuildFolder {
  absDir: string;
  label: string;
}

/**
 * kustomizeBuild of several independent folders (a pass's layers), each giving what it builds alone.
 * Starting kubectl costs about 0.1 s, more than building a small layer, so the folders not kept from
 * an earlier build are built by one kubectl, each below a kustomization of its own that marks its
 * objects (then unmarked); where that build fails (two folders holding the same object, a broken
 * folder), each is built alone, so an error names its folder as before.
 */
export async function kustomizeBuildAll(
  folders: readonly BuildFolder[],
  settings: BuildSettings,
): Promise<BuiltObject[][]> {
  const kubectl = settings.kubectl ?? 'kubectl';
  const shownFor = (f: BuildFolder) => settings.shown ?? belowLabel(f.absDir, f.label);
  for (const f of folders) refuseRemoteResources(f.absDir, shownFor(f), settings.roots);
  await requireKubectl(kubectl);
  const how: BuildHow = {
    kubectl,
    box: await buildBox(kubectl),
    roots: settings.roots,
    origins: settings.fileNames !== false,
  };
  const keys = folders.map((f) => buildInputsDigest(f.absDir, [kubectl, how.box, String(how.origins)]));
  const kept = keys.map((key) => (key === undefined ? undefined : builds.get(key)));
  const toBuild = folders.filter((_, i) => !kept[i]);
  const together = toBuild.length > 1 ? await runCombinedBuild(toBuild, how) : undefined;
  const built = await allBuilds(
    folders.map(async (f, i) => kept[i] ?? together?.[toBuild.indexOf(f)] ?? runBuild(f.absDir, f.label, how)),
  );
  built.forEach((b, i) => {
    if (keys[i] !== undefined && !kept[i]) builds.set(keys[i]!, b, b.bytes * BUILD_HEAP_PER_OUTPUT_BYTE);
  });
  // Copies: callers edit what they get (substitution, origin annotations taken off), and the kept build is the next caller's.
  return built.map((b, i) =>
    structuredClone(b.objects).map(({ body, origin }) =>
      origin === null
        ? { body }
        : { body, file: origin === undefined ? undefined : shownFor(folders[i])(resolve(folders[i].absDir, origin)) },
    ),
  );
}

/** A build's objects, each with the file its origin annotation names relative to the built folder (null: no annotation), and the size of kustomize's output. */
interface KeptBuild {
  objects: Array<{ body: any; origin: string | null | undefined }>;
  bytes: number;
}

/**
 * Successful builds by a digest of their inputs (buildInputsDigest): the full pass builds again the
 * layers the infra pass built, mostly byte for byte the same. A build whose inputs are identical to
 * one this process validated is not run again; any changed byte, added file or setting runs it.
 * Bounded by 32 MiB, or a 32nd of the heap's limit in a smaller heap (8.4 MiB in a 512 MiB pod).
 */
const builds = new LruByBytes<KeptBuild>(boundFromHeapLimit(1 / 32, 32 * 1024 * 1024));
/** A kept build's heap per byte of kustomize's output: its objects as plain values take about twice the YAML text, and a margin. */
const BUILD_HEAP_PER_OUTPUT_BYTE = 3;

/** How a build runs: the kubectl, the box it runs in and the folders it may read, and whether objects carry origin annotations. */
interface BuildHow {
  kubectl: string;
  box: BoxLevel;
  roots: readonly string[];
  origins: boolean;
}

/** The box builds run in here (BUILD_SANDBOX); a box the settings demand and the machine cannot make refuses every build. */
async function buildBox(kubectl: string): Promise<BoxLevel> {
  try {
    return await boxLevel(kubectl);
  } catch (e) {
    if (e instanceof BuildBoxError) throw new GeneratorValidationError(e.message);
    throw e;
  }
}

/** The wrapper kustomization's request for origin annotations, when asked for. */
const originRequest = (how: BuildHow) => (how.origins ? { buildMetadata: ['originAnnotations'] } : {});

async function runBuild(absDir: string, label: string, how: BuildHow): Promise<KeptBuild> {
  const wrapper = mkdtempSync(join(tmpdir(), 'kustomize-origin-'));
  try {
    writeFileSync(
      join(wrapper, 'kustomization.yaml'),
      stringify({ resources: [relative(wrapper, absDir) || '.'], ...originRequest(how) }),
    );
    const stdout = await kustomizeOutput(how, wrapper);
    const objects = parseFresh(stdout, label).map((doc) =>
      withoutOrigin(doc.toJS(), (path) => relative(absDir, resolve(wrapper, path))),
    );
    return { objects, bytes: Buffer.byteLength(stdout) };
  } catch (e: any) {
    if (e instanceof GeneratorValidationError) throw e;
    const reason = String(e.stderr || e.message || 'unknown error')
      .trim()
      .split('\n')
      .slice(0, 3)
      .map(middleCut)
      .join(' / ');
    const places: Array<[string, string]> = [
      [absDir, label],
      [wrapper, label],
      ...how.roots.map((r): [string, string] => [r, '']),
    ];
    throw new GeneratorValidationError(`kustomize build of ${label} failed: ${withoutMachinePaths(reason, places)}`);
  } finally {
    rmSync(wrapper, { recursive: true, force: true });
  }
}

/**
 * A line of kustomize's in a message, its middle cut past 800 characters: a line quoting a file's
 * content must not carry all of it, and kustomize names the failing file last, after the chain of
 * kustomizations that led there.
 */
const middleCut = (line: string) => (line.length > 800 ? `${line.slice(0, 200)} … ${line.slice(-600)}` : line);

/** An absolute path in a program's message (after a space, quote, bracket or `=`; a URL's `//` is not one). */
const ABSOLUTE_PATH = /(^|[\s'"`(=[])\/[^\s'"`)\],;]*/g;

/**
 * A program's message with the service's own paths gone: each known folder replaced by its name in
 * the repository (`places`: the folder, and what to show for it; '' for a root, so a file below it is
 * shown by its path in the repository), any other absolute path by a placeholder.
 */
export function withoutMachinePaths(text: string, places: ReadonlyArray<readonly [string, string]>): string {
  let out = text;
  for (const [dir, shown] of [...places].sort((a, b) => b[0].length - a[0].length))
    for (const spelling of new Set([dir, realLocation(dir)]))
      out = out.replaceAll(`${spelling}/`, shown ? `${shown}/` : '').replaceAll(spelling, shown || '.');
  return out.replace(ABSOLUTE_PATH, (_, before: string) => `${before}(a path outside the repository)`);
}

/**
 * How a build may load files. kustomize-controller builds with LoadRestrictionsNone inside the source's artifact,
 * so a kustomization may load `../../components/replacements/ks.yaml` (home-ops repositories do). Bubblewrap's box
 * shows the build only the repositories' folders, so loading as Flux does reads nothing else of this machine; the
 * weaker boxes do not confine reads, and there each kustomization loads only below its own folder (kustomize's
 * root-only loading), which refuses such a repository by kustomize's reason rather than read elsewhere.
 */
export const loadRestrictor = (box: BoxLevel) =>
  box === 'bubblewrap' ? 'LoadRestrictionsNone' : 'LoadRestrictionsRootOnly';

/**
 * `kubectl kustomize` of a folder (a wrapper the build wrote) in the build box, in a build slot: its
 * output, loaded as loadRestrictor says. Aborting the pass kills the kubectl.
 */
async function kustomizeOutput({ kubectl, box, roots }: BuildHow, dir: string): Promise<string> {
  const command = boxedCommand(
    box,
    kubectl,
    ['kustomize', `--load-restrictor=${loadRestrictor(box)}`, dir],
    [dir, ...roots],
  );
  const { stdout } = await withBuildSlot(() =>
    run(command.file, command.args, { maxBuffer: MAX_BUILD_OUTPUT_BYTES, env: command.env }, passSignal()),
  );
  return stdout;
}

/** kustomize's output beyond this ends the build (a generator can multiply what a repository holds). */
const MAX_BUILD_OUTPUT_BYTES = 256 * 1024 * 1024;

/** The annotation a combined build marks each folder's objects with (the folder's index), taken off again. */
const FOLDER_MARK = 'build.gitops-scaffolder.internal/folder';

/**
 * One kubectl for several folders: a kustomization per folder (the folder as its only resource, and a
 * transformer annotating the top-level metadata of its objects only, so no template or selector
 * changes), under one that asks for origin annotations. What each folder builds to, or undefined where
 * the build failed or an object came back unmarked (the caller builds each folder alone then).
 */
async function runCombinedBuild(folders: readonly BuildFolder[], how: BuildHow): Promise<KeptBuild[] | undefined> {
  const wrapper = mkdtempSync(join(tmpdir(), 'kustomize-layers-'));
  try {
    folders.forEach((f, i) => {
      const own = join(wrapper, `f${i}`);
      mkdirSync(own);
      const mark = {
        apiVersion: 'builtin',
        kind: 'AnnotationsTransformer',
        metadata: { name: 'folder' },
        annotations: { [FOLDER_MARK]: String(i) },
        fieldSpecs: [{ path: 'metadata/annotations', create: true }],
      };
      writeFileSync(
        join(own, 'kustomization.yaml'),
        stringify({ resources: [relative(own, f.absDir)], transformers: [stringify(mark)] }),
      );
    });
    writeFileSync(
      join(wrapper, 'kustomization.yaml'),
      stringify({ resources: folders.map((_, i) => `f${i}`), ...originRequest(how) }),
    );
    const stdout = await kustomizeOutput(how, wrapper);
    const built: KeptBuild[] = folders.map(() => ({ objects: [], bytes: 0 }));
    for (const doc of parseFresh(stdout, 'layers')) {
      const body = doc.toJS();
      const i = takeFolderMark(body);
      if (i === undefined || !built[i]) return undefined;
      built[i].objects.push(withoutOrigin(body, (path) => relative(folders[i].absDir, resolve(wrapper, path))));
    }
    // Kept builds are bounded by size: each folder's share of the output.
    for (const b of built) b.bytes = Math.ceil(Buffer.byteLength(stdout) / folders.length);
    return built;
  } catch {
    return undefined;
  } finally {
    rmSync(wrapper, { recursive: true, force: true });
  }
}

/** The folder index a combined build marked the object with, the mark taken off (and an emptied annotations map). */
function takeFolderMark(body: any): number | undefined {
  const annotations = body?.metadata?.annotations;
  const mark = annotations?.[FOLDER_MARK];
  if (typeof mark !== 'string') return undefined;
  delete annotations[FOLDER_MARK];
  if (Object.keys(annotations).length === 0) delete body.metadata.annotations;
  return Number(mark);
}

/**
 * The folder a Flux Kustomization applies, as kustomize-controller builds it: the folder itself when
 * it has a kustomization file, else the kustomization the controller would generate for it
 * (generatedResources), written at `at` (outside the folder) with the folder's manifests copied
 * beside it and its sub-folders with a kustomization named by their paths. kustomize-controller
 * writes that kustomization into the folder and builds with LoadRestrictionsNone inside the artifact
 * only; here the copy keeps every kustomization loading only below its own folder (root-only), so a
 * kustomization of a tenant's cannot load a file elsewhere on this machine. The plain manifests name
 * no file, so the copies build to the same objects. Nothing is written into the repository: Flux
 * regenerates the kustomization on every reconciliation from what the folder holds then, whereas a
 * written one would freeze today's list. Every entry must stay inside `roots` before it is read (a
 * YAML error quotes the line it is on, so a link to a file elsewhere is refused unread). `shown`
 * names a copy as the file it was copied from.
 */
export function asFluxBuildsIt(
  dir: string,
  at: string,
  roots: readonly string[],
  shown: (absFile: string) => string,
): { dir: string; shown: (absFile: string) => string } {
  if (findKustomizationFile(dir)) return { dir, shown };
  const refuseOutside = (path: string) => {
    if (!insideRoots(path, roots))
      throw new GeneratorInputError(
        `${shown(path)}: leads outside the repository (a symbolic link); only paths in the repository are built`,
      );
  };
  refuseOutside(dir);
  const resources = generatedResources(dir, '', (rel) => refuseOutside(join(dir, rel))).map((rel) => {
    if (findKustomizationFile(join(dir, rel))) return relative(at, join(dir, rel));
    mkdirSync(join(at, rel, '..'), { recursive: true });
    writeFileSync(join(at, rel), readRepoFile(dir, rel));
    return rel;
  });
  mkdirSync(at, { recursive: true });
  writeFileSync(
    join(at, 'kustomization.yaml'),
    stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources }),
  );
  const original = (file: string) => (file.startsWith(at + sep) ? join(dir, relative(at, file)) : file);
  return { dir: at, shown: (file) => shown(original(file)) };
}

/** A finding of a check (a refusal naming what it found), as opposed to a failure to check (kubectl missing, a bug). */
const isFinding = (e: unknown) => e instanceof GeneratorValidationError || e instanceof GeneratorInputError;

/**
 * Whether the last check of each kind of pass (`sameAs`: the reference, its environment and the pass)
 * reported anything. Passes of one reference mostly report alike (a request shape that always warns),
 * so after a check that reported, the next of its kind builds with file names at once: one build where
 * two were made. A kind that stops reporting goes back to the fast build after one check.
 */
const reportedLastTime = new Map<string, boolean>();
const REPORT_HABITS_KEPT = 256;

function rememberReported(sameAs: string | undefined, reported: boolean) {
  if (sameAs === undefined) return;
  reportedLastTime.delete(sameAs);
  if (reportedLastTime.size >= REPORT_HABITS_KEPT) reportedLastTime.delete(reportedLastTime.keys().next().value!);
  reportedLastTime.set(sameAs, reported);
}

/**
 * Runs `check` (builds, then checks that throw or add warnings to `summary`) first on builds without
 * file names, which kustomize makes many times faster for large layers; a check that reports anything
 * (refuses, or warns) runs again on builds with them, so every message names its file as before.
 * The first run works on a copy of the summary, kept only when it reported nothing. When the last
 * check of the same kind (`sameAs`) reported, the check runs with file names only.
 */
export async function checkWithFileNamesWhereNeeded<S extends { warnings: string[] }>(
  summary: S,
  check: (summary: S, fileNames: boolean) => Promise<void>,
  sameAs?: string,
): Promise<void> {
  if (sameAs !== undefined && reportedLastTime.get(sameAs)) return checkWithFileNames(summary, check, sameAs);
  const scratch = structuredClone(summary);
  const reported = await check(scratch, false).then(
    () => scratch.warnings.length !== summary.warnings.length,
    (e) => {
      if (isFinding(e)) return true;
      throw e;
    },
  );
  rememberReported(sameAs, reported);
  if (!reported) return void Object.assign(summary, scratch);
  await check(summary, true);
}

/** `check` on builds with file names, remembering whether it reported. */
async function checkWithFileNames<S extends { warnings: string[] }>(
  summary: S,
  check: (summary: S, fileNames: boolean) => Promise<void>,
  sameAs: string,
): Promise<void> {
  const before = summary.warnings.length;
  try {
    await check(summary, true);
  } catch (e) {
    if (isFinding(e)) rememberReported(sameAs, true);
    throw e;
  }
  rememberReported(sameAs, summary.warnings.length !== before);
}

/** What building one Flux Kustomization's folder gave: what the pass reports as checked, and the objects it applies. */
export interface FluxBuild<T> {
  checked: T;
  objects: readonly BuiltObject[];
}

/**
 * Builds Flux Kustomizations as Flux reconciles them, to any depth: `first`, then every Flux
 * Kustomization their builds apply, and so on (each once, by name, as Flux keys them), a wave of
 * builds at a time. Returns every Kustomization met and each build's `checked`.
 */
export async function buildKustomizationGraph<T>(
  first: readonly any[],
  build: (kustomization: any) => Promise<FluxBuild<T>>,
): Promise<{ kustomizations: any[]; checked: T[] }> {
  const kustomizations = [...first];
  const seen = new Set(first.map(kustomizationName));
  const checked: T[] = [];
  for (let wave = [...first]; wave.length > 0;) {
    const results = await allBuilds(wave.map(build));
    checked.push(...results.map((r) => r.checked));
    // Two folders of one wave may apply the same Kustomization: it is built once.
    const isNew = (b: any) => {
      if (!isFluxKustomization(b) || seen.has(kustomizationName(b))) return false;
      seen.add(kustomizationName(b));
      return true;
    };
    wave = results.flatMap((r) => r.objects.map((o) => o.body)).filter(isNew);
    kustomizations.push(...wave);
  }
  return { kustomizations, checked };
}

const kustomizationName = (b: any) => String(b?.metadata?.name);

/**
 * Every `dependsOn` of the pass's Kustomizations, nested ones included, names one the pass applies
 * (Flux would wait for the missing one forever).
 */
export function checkDependencies(kustomizations: readonly any[], where: string): void {
  const names = new Set(kustomizations.map(kustomizationName));
  for (const b of kustomizations) {
    const missing = (b.spec?.dependsOn ?? []).map((d: any) => String(d?.name)).find((d: string) => !names.has(d));
    if (missing)
      throw new GeneratorValidationError(
        `${where}: Kustomization ${kustomizationName(b)} depends on ${missing}, which this pass does not apply`,
      );
  }
}

/** Promise.all for builds side by side, except that every build ends before the first failure is thrown: a pass never returns while its kubectl still runs. */
export async function allBuilds<T extends readonly unknown[]>(builds: {
  readonly [K in keyof T]: Promise<T[K]> | T[K];
}): Promise<T> {
  const results = await Promise.allSettled(builds as readonly unknown[]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** The object as the folder builds it, and the file its origin annotation names (a generator's kustomization for generated objects), as `located` gives it. */
function withoutOrigin(body: any, located: (path: string) => string): KeptBuild['objects'][number] {
  const annotations = body?.metadata?.annotations;
  const origin = annotations?.[ORIGIN];
  if (typeof origin !== 'string') return { body, origin: null };
  delete annotations[ORIGIN];
  if (Object.keys(annotations).length === 0) delete body.metadata.annotations;
  const where = parse(origin);
  const path = where?.path ?? where?.configuredIn;
  return { body, origin: typeof path === 'string' ? located(path) : undefined };
}

/**
 * A built object as the cluster receives it after Flux's post-build substitution; an undefined
 * variable (Flux would write an empty string without a word) or a result that is no longer YAML is refused.
 */
export function substituteBuilt(
  built: BuiltObject,
  vars: Readonly<Record<string, string>>,
  label: string,
): BuiltObject {
  const r = substituteObject(built.body, vars);
  const what = `${built.body?.kind} ${built.body?.metadata?.name}`;
  const from = built.file ? ` (from ${built.file})` : '';
  if (r.undefinedNames.length > 0)
    throw new GeneratorValidationError(`${label} builds ${what} with undefined \${${r.undefinedNames[0]}}${from}`);
  if (r.broken) throw new GeneratorValidationError(`${label} builds ${what}${from}, which ${r.broken}`);
  return { ...built, body: r.body };
}

/** The schema check of what one build applies, counted in the summary. */
export function checkAgainstSchemas(summary: GenerateSummary, objects: readonly BuiltObject[], label: string): void {
  addSchemaCheck(summary, checkSchemas(objects, label));
}

function addSchemaCheck(summary: GenerateSummary, check: SchemaCheck) {
  summary.schema_checked ??= { objects: 0, kinds_without_schema: [] };
  summary.schema_checked.objects += check.checked;
  const kinds = new Set([...summary.schema_checked.kinds_without_schema, ...check.withoutSchema]);
  summary.schema_checked.kinds_without_schema = [...kinds].sort();
  for (const warning of check.warnings) if (!summary.warnings.includes(warning)) summary.warnings.push(warning);
}

/** Every check on what one build applies: the project's rules (checkObjects), then the schemas. */
export function checkBuilt(
  summary: GenerateSummary,
  objects: readonly BuiltObject[],
  label: string,
  domain: string,
): void {
  checkObjects(
    objects.map((o) => o.body),
    label,
    domain,
  );
  checkAgainstSchemas(summary, objects, label);
}

/**
 * The project's checks on what a layer builds to (after Flux post-build substitution where it
 * applies): no plaintext Secret with values, and every Ingress host under the new domain (a host
 * patch that missed its target shows up here).
 */
export function checkObjects(objects: any[], label: string, domain: string): void {
  for (const body of objects) {
    if (!body) continue;
    checkNotPlaintextSecret(body, label);
    if (body.kind === 'Ingress') {
      // The field, not the value: a host is what the build made of the repository, which may be anything it could read.
      const stray = hostsIn(body, objectId(body)).find(
        ({ host }) => host && host !== domain && !host.endsWith('.' + domain),
      );
      if (stray) throw new GeneratorValidationError(`${label} builds ${stray.where} with a host outside ${domain}`);
    }
  }
}

const objectId = (body: any) =>
  `${shownKind(body.kind)} ${shownName(body.metadata?.namespace ?? '')}/${shownName(body.metadata?.name ?? '')}`;

/** A Secret with values that are neither sealed nor SOPS-encrypted must never reach the repository. */
export function checkNotPlaintextSecret(body: any, label: string): void {
  const values = [...Object.values(body.data ?? {}), ...Object.values(body.stringData ?? {})];
  const sopsEncrypted = values.every((v) => typeof v === 'string' && v.startsWith('ENC[AES256_GCM,'));
  if (body.kind === 'Secret' && values.length > 0 && !sopsEncrypted && !generatedFromSops(body))
    throw new GeneratorValidationError(`${label} builds a plaintext ${objectId(body)}`);
}

/**
 * A Secret kustomize generated from SOPS-encrypted files, as it is before kustomize-controller
 * decrypts them: every `data` value an encrypted file or an encrypted dotenv value, and `sops_*`
 * metadata keys only beside an encrypted `sops_mac` (so a plaintext key named sops_... proves nothing).
 */
function generatedFromSops(body: any): boolean {
  if (body.stringData !== undefined) return false;
  const data = Object.entries(body.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString('utf8')]);
  const hasMeta = data.some(([k]) => k.startsWith('sops_'));
  const mac = data.find(([k]) => k === 'sops_mac')?.[1];
  if (hasMeta && !isEncValue(mac)) return false;
  return data.every(([k, text]) => isEncryptedGeneratedValue(k, text));
}
