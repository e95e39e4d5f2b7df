/**
 * What a scaffolded cluster in the layout of Flux's example repository applies, built here with
 * kubectl kustomize independently of the generator's own validation.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { readTree, tempDir, yamlObjects } from './files';

const parseYaml = (text: string) =>
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
