import { availableParallelism } from 'node:os';
import { join, normalize, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { execInHelper, offlineBuildEnvironment } from '../../runtime/src';
import { GeneratorValidationError } from './errors';
import { ingressHosts } from './ingress';
import { refuseRemoteResources } from './remote-resources';

export interface KustomizeBuild {
  available: boolean;
  output: string;
}

/** kubectl is started by this thread's helper process: a fork of the service would stall it (see HelperProcess). */
const run = execInHelper;

/** At most one kustomize build per core at a time, process-wide: more only thrashes the CPU the API needs too. */
const MAX_BUILDS = Math.max(1, availableParallelism());
let running = 0;
const waiting: Array<() => void> = [];

async function withBuildSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_BUILDS) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}
let kubectlPresent: Promise<boolean> | undefined;

function kubectlAvailable(): Promise<boolean> {
  kubectlPresent ??= run('kubectl', ['version', '--client']).then(
    () => true,
    (e) => e.code !== 'ENOENT',
  );
  return kubectlPresent;
}

/** A file's name in messages: its path below the build's label (a repository path), e.g. clusters/c/apps/../base → clusters/c/base. */
const belowLabel = (absDir: string, label: string) => (file: string) => normalize(join(label, relative(absDir, file)));

/**
 * `kubectl kustomize DIR`: the same build Flux's kustomize-controller runs. Asynchronous, so a
 * service generating trees keeps answering its API while kustomize works. Every build passes here:
 * a kustomization naming a remote resource, or a local one outside `roots` (the working copy and the
 * build's scratch folder), is refused first (GeneratorInputError naming the file, as `shown` names
 * it), and kubectl runs offline (git for local files only, proxies to nowhere).
 */
export async function kustomizeBuild(absDir: string, label: string, roots: readonly string[], shown: (absFile: string) => string = belowLabel(absDir, label)): Promise<KustomizeBuild> {
  refuseRemoteResources(absDir, shown, roots);
  if (!(await kubectlAvailable())) return { available: false, output: '' };
  try {
    const { stdout } = await withBuildSlot(() => run('kubectl', ['kustomize', absDir], { maxBuffer: 256 * 1024 * 1024, env: offlineBuildEnvironment() }));
    return { available: true, output: stdout };
  } catch (e: any) {
    const reason = String(e.stderr || e.message || 'unknown error')
      .trim()
      .split('\n')
      .slice(0, 3)
      .join(' / ');
    throw new GeneratorValidationError(`kustomize build of ${label} failed: ${reason.replaceAll(absDir, label)}`);
  }
}

/**
 * Checks on what a layer builds to: no plaintext Secret with values, and every Ingress host
 * under the new domain (a host patch that missed its target shows up here).
 */
export function checkBuiltObjects(output: string, label: string, domain: string): void {
  checkObjects(
    (parseAllDocuments(output) as any[]).map((doc) => doc.toJS?.()),
    label,
    domain,
  );
}

/** The same checks on objects already parsed (and, for Flux post-build substitution, substituted). */
export function checkObjects(objects: any[], label: string, domain: string): void {
  for (const body of objects) {
    if (!body) continue;
    checkNotPlaintextSecret(body, label);
    const id = objectId(body);
    if (body.kind === 'Ingress') {
      const stray = ingressHosts(body)
        .filter(Boolean)
        .find((h) => h !== domain && !h.endsWith('.' + domain));
      if (stray) throw new GeneratorValidationError(`${label} builds ${id} with host ${stray}, outside ${domain}`);
    }
  }
}

const objectId = (body: any) => `${body.kind} ${body.metadata?.namespace ?? ''}/${body.metadata?.name ?? ''}`;

/** A Secret with values that are neither sealed nor SOPS-encrypted must never reach the repository. */
export function checkNotPlaintextSecret(body: any, label: string): void {
  const values = [...Object.values(body.data ?? {}), ...Object.values(body.stringData ?? {})];
  const sopsEncrypted = values.every((v) => typeof v === 'string' && v.startsWith('ENC[AES256_GCM,'));
  if (body.kind === 'Secret' && values.length > 0 && !sopsEncrypted) throw new GeneratorValidationError(`${label} builds a plaintext ${objectId(body)}`);
}
