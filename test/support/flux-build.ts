/**
 * What a scaffolded cluster in the layout of Flux's example repository applies, built here with
 * kubectl kustomize independently of the generator's own validation.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { readTree, tempDir, writeTree, yamlObjects } from './files';

export const parseYaml = (text: string): any[] =>
  parseAllDocuments(text)
    .map((d: any) => d.toJS())
    .filter(Boolean);

/** Copies a folder's files (what `<dir>/**` copies in an ArtifactGenerator rule). */
function copyInto(from: string, to: string) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from)) {
    if (entry.startsWith('.')) continue;
    const src = join(from, entry);
    if (statSync(src).isDirectory()) copyInto(src, join(to, entry));
    else cpSync(src, join(to, entry));
  }
}

/**
 * What Flux would apply for one of the cluster's Kustomizations, built here with kubectl kustomize
 * (the artifact rebuilt from the cluster's ArtifactGenerator for ExternalArtifact sources).
 */
export function fluxBuild(repo: string, cluster: string, k: any): any[] {
  const scratch = tempDir('flux-build');
  let dir = join(repo, k.spec.path);
  if (k.spec.sourceRef.kind === 'ExternalArtifact') {
    const generator = yamlObjects(join(repo, 'clusters', cluster, 'artifacts.yaml')).find(
      (o) => o.kind === 'ArtifactGenerator',
    );
    const artifact = generator.spec.artifacts.find((a: any) => a.name === k.spec.sourceRef.name);
    for (const rule of artifact.copy) {
      const from = rule.from.replace(/^@monorepo\//, '').replace(/\/\*\*$/, '');
      copyInto(join(repo, from), join(scratch, 'artifact', rule.to.replace(/^@artifact\//, '')));
    }
    dir = join(scratch, 'artifact', k.spec.path);
  }
  const build = join(scratch, 'build');
  mkdirSync(build);
  writeFileSync(
    join(build, 'kustomization.yaml'),
    stringify({ resources: [relative(build, dir)], ...(k.spec.patches ? { patches: k.spec.patches } : {}) }),
  );
  try {
    return parseYaml(execFileSync('kubectl', ['kustomize', build], { encoding: 'utf8' }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The cluster's Flux Kustomizations (Flux applies every file of the cluster folder) and what each builds. */
export function clusterView(repo: string, cluster: string) {
  const folder = join(repo, 'clusters', cluster);
  const files = Object.keys(readTree(folder)).filter((f) => f.endsWith('.yaml'));
  const declared = files.flatMap((f) => yamlObjects(join(folder, f)));
  const syncs = declared.filter(
    (o) => o.kind === 'Kustomization' && o.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/'),
  );
  const built: Record<string, any[]> = Object.fromEntries(
    syncs
      .filter((k) => k.spec.path !== `./clusters/${cluster}`)
      .map((k) => [k.metadata.name, fluxBuild(repo, cluster, k)]),
  );
  return { declared, syncs, built };
}

/** Every file except the new cluster's two folders, with its bytes. */
export function outsideNewCluster(repo: string) {
  const tree = readTree(repo);
  return Object.fromEntries(
    Object.entries(tree).filter(([f]) => !f.startsWith('clusters/acme/') && !f.startsWith('apps/acme/')),
  );
}

export const isFluxKustomization = (o: any) =>
  o?.kind === 'Kustomization' && String(o.apiVersion).startsWith('kustomize.toolkit.fluxcd.io/');

/**
 * The kustomization kustomize-controller writes into a folder that has none, written here from
 * Flux's rules (not the generator's code): every .yaml/.yml file down the tree, a subfolder with a
 * kustomization.yaml as one entry.
 */
function fluxResources(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory())
        return existsSync(join(dir, child, 'kustomization.yaml')) ? [child] : fluxResources(dir, child);
      return /\.ya?ml$/.test(e.name) ? [child] : [];
    });
}

/**
 * `kubectl kustomize` of what one Flux Kustomization applies, as Flux builds it: in a copy of the
 * repository (Flux's artifact), with the kustomization generated in place when the folder has
 * none, and the Kustomization's inline patches.
 */
function fluxGeneratedBuild(repo: string, k: any): any[] {
  const scratch = tempDir('flux-build');
  try {
    const artifact = join(scratch, 'artifact');
    cpSync(repo, artifact, { recursive: true });
    const dir = join(artifact, k.spec.path);
    if (!existsSync(join(dir, 'kustomization.yaml')))
      writeFileSync(join(dir, 'kustomization.yaml'), stringify({ resources: fluxResources(dir) }));
    const build = join(scratch, 'build');
    writeTree(build, {
      'kustomization.yaml': stringify({
        resources: [relative(build, dir)],
        ...(k.spec.patches ? { patches: k.spec.patches } : {}),
      }),
    });
    return parseYaml(execFileSync('kubectl', ['kustomize', build], { encoding: 'utf8' }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Every Flux Kustomization a cluster runs, from the one over its entry folder (`entryPath`, named
 * flux-system) down every nested one, with what each applies (`applied` turns a build into what
 * the cluster receives, e.g. after post-build substitution).
 */
export function fluxGraph(
  repo: string,
  entryPath: string,
  applied: (k: any, objects: any[]) => any[] = (_k, objects) => objects,
): Map<string, { k: any; objects: any[] }> {
  const entry = { metadata: { name: 'flux-system' }, spec: { path: entryPath } };
  const graph = new Map<string, { k: any; objects: any[] }>();
  for (let wave: any[] = [entry]; wave.length > 0;) {
    const next: any[] = [];
    for (const k of wave) {
      const objects = applied(k, fluxGeneratedBuild(repo, k));
      graph.set(k.metadata.name, { k, objects });
      next.push(...objects.filter((o) => isFluxKustomization(o) && !graph.has(o.metadata.name)));
    }
    wave = next.filter((k, i) => next.findIndex((o) => o.metadata.name === k.metadata.name) === i);
  }
  return graph;
}
