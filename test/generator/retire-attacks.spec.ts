/**
 * `generate-gitops-env retire` attacked (an independent reviewer's tests): ownership markers a tenant placed where the
 * command does not expect them, references to the retired folders it could miss, files the tag would not keep, names
 * no tag can hold. Repositories are made by hand: retire reads only markers, git and YAML.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTree, tempDir, writeTree } from '../support/files';
import { generatorCli } from '../support/generator-cli';
import { git } from '../support/lifecycle';

const marker = (cluster: string) =>
  JSON.stringify({ cluster_name: cluster, domain: `${cluster}.acme.io`, region: 'us-east-1', reference_env: 'prod' });

/** A committed repository of `files`. */
function repoOf(prefix: string, files: Record<string, string>): string {
  const repo = tempDir(prefix);
  git(repo, 'init', '-q', '-b', 'main');
  writeTree(repo, files);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'fleet');
  return repo;
}

const retire = (repo: string, cluster: string, ...extra: string[]) =>
  generatorCli(['retire', '--repo', repo, '--cluster-name', cluster, '--confirm', cluster, ...extra]);

describe('generate-gitops-env retire, attacked', () => {
  it("refuses when a marker naming the cluster sits inside ANOTHER environment's folder (never deletes the other tenant's files)", async () => {
    // Tenant acme-prod commits a marker naming itself into acme-dev's apps folder.
    const repo = repoOf('retire-nested', {
      'clusters/acme-dev/.gitops-scaffolder.json': marker('acme-dev'),
      'clusters/acme-dev/kustomization.yaml': 'resources:\n  - apps\n',
      'clusters/acme-dev/apps/kustomization.yaml': 'resources:\n  - app.yaml\n',
      'clusters/acme-dev/apps/app.yaml': 'kind: ConfigMap\n',
      'clusters/acme-dev/apps/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/kustomization.yaml': 'resources: []\n',
    });
    const before = readTree(repo);
    const r = await retire(repo, 'acme-prod');
    expect(existsSync(join(repo, 'clusters/acme-dev/apps/app.yaml'))).toBe(true);
    expect(r.code).toBe(2);
    expect(readTree(repo)).toEqual(before);
    expect(git(repo, 'tag', '--list')).toBe('');
  });

  it('never deletes the whole working copy (and its .git) when the marker naming the cluster is at the repository root', async () => {
    const repo = repoOf('retire-root', {
      '.gitops-scaffolder.json': marker('acme-prod'),
      'kustomization.yaml': 'resources:\n  - apps\n',
      'apps/app.yaml': 'kind: ConfigMap\n',
      'README.md': 'the fleet\n',
    });
    const r = await retire(repo, 'acme-prod', '--json');
    // Whatever it decides (a refusal would be right: the root is every folder), the repository and its history stay.
    expect(existsSync(join(repo, '.git'))).toBe(true);
    expect(existsSync(repo)).toBe(true);
    if (r.code === 0) {
      // If it retires, its own plan must list what it removed; it removed everything while listing nothing.
      const plan = JSON.parse(r.stdout);
      expect(plan.files_removed.length).toBeGreaterThan(0);
    }
  });

  it('keeps files git ignores in the environment folder, or refuses (they are not in the tag, so the restore cannot bring them back)', async () => {
    const repo = repoOf('retire-ignored', {
      '.gitignore': '*.local.yaml\n',
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/kustomization.yaml': 'resources: []\n',
    });
    writeTree(repo, { 'clusters/acme-prod/secrets.local.yaml': 'password: only-copy\n' });
    const r = await retire(repo, 'acme-prod');
    if (r.code === 0) expect(existsSync(join(repo, 'clusters/acme-prod/secrets.local.yaml'))).toBe(true);
    else expect(r.code).toBe(2);
  });

  it("removes a shared kustomization's components entry naming the retired folder too (kustomize build fails on a missing component)", async () => {
    const repo = repoOf('retire-components', {
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n',
      'clusters/acme-dev/.gitops-scaffolder.json': marker('acme-dev'),
      'clusters/acme-dev/kustomization.yaml': 'resources: []\n',
      'fleet/kustomization.yaml': 'resources:\n  - ../clusters/acme-dev\ncomponents:\n  - ../clusters/acme-prod\n',
    });
    const r = await retire(repo, 'acme-prod');
    expect(r.code).toBe(0);
    expect(readFileSync(join(repo, 'fleet/kustomization.yaml'), 'utf8')).not.toContain('acme-prod');
  });

  it('refuses while a Flux Kustomization applies the folder with a leading-slash path (/clusters/acme-prod, as Flux accepts)', async () => {
    const repo = repoOf('retire-slash', {
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/kustomization.yaml': 'resources: []\n',
      'hub/spoke.yaml':
        'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: prod, namespace: flux-system}\nspec:\n  path: /clusters/acme-prod\n  interval: 10m\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n',
    });
    const r = await retire(repo, 'acme-prod');
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('still applied from outside')]);
    expect(existsSync(join(repo, 'clusters/acme-prod/kustomization.yaml'))).toBe(true);
  });

  it('prints a restore command that works when a folder name holds a space', async () => {
    const repo = repoOf('retire-space', {
      'clusters/acme prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme prod/kustomization.yaml': 'resources: []\n',
    });
    const before = readTree(repo);
    const r = await retire(repo, 'acme-prod', '--json');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    // Run the printed command through a shell, as a user pastes it.
    const { execSync } = await import('node:child_process');
    execSync(plan.restore, { cwd: repo, stdio: 'pipe' });
    expect(readTree(repo)).toEqual(before);
  });
});

describe('generate-gitops-env retire, a marker in a shared base', () => {
  it("refuses when another environment's own kustomization still lists a folder the marker claims (never edits another environment)", async () => {
    // A tenant's marker naming acme-prod in the shared base/ that acme-dev builds on.
    const repo = repoOf('retire-base', {
      'base/.gitops-scaffolder.json': marker('acme-prod'),
      'base/kustomization.yaml': 'resources:\n  - ns.yaml\n',
      'base/ns.yaml': 'kind: Namespace\n',
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/kustomization.yaml': 'resources:\n  - ../../base\n',
      'clusters/acme-dev/.gitops-scaffolder.json': marker('acme-dev'),
      'clusters/acme-dev/kustomization.yaml': 'resources:\n  - ../../base\n',
    });
    const before = readTree(repo);
    const r = await retire(repo, 'acme-prod');
    expect(readFileSync(join(repo, 'clusters/acme-dev/kustomization.yaml'), 'utf8')).toBe(
      before['clusters/acme-dev/kustomization.yaml'],
    );
    expect(existsSync(join(repo, 'base/ns.yaml'))).toBe(true);
    expect(r.code).toBe(2);
  });
});

describe('generate-gitops-env retire, shared files', () => {
  it('refuses when a shared file it would edit holds uncommitted changes (the restore from the tag would lose them)', async () => {
    const repo = repoOf('retire-dirty-shared', {
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/kustomization.yaml': 'resources: []\n',
      'clusters/acme-dev/.gitops-scaffolder.json': marker('acme-dev'),
      'clusters/acme-dev/kustomization.yaml': 'resources: []\n',
      'clusters/kustomization.yaml': 'resources:\n  - acme-prod\n  - acme-dev\n',
    });
    writeTree(repo, { 'clusters/kustomization.yaml': 'resources:\n  - acme-prod\n  - acme-dev\n  - acme-new\n' });
    const r = await retire(repo, 'acme-prod');
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('uncommitted')]);
  });

  it(".sops.yaml: keeps a general creation rule that today happens to match only the retired environment's files", async () => {
    const sops = 'creation_rules:\n  - path_regex: ^clusters/[^/]+/secrets/.*\\.yaml$\n    age: age1example\n';
    const repo = repoOf('retire-sops', {
      '.sops.yaml': sops,
      'clusters/acme-prod/.gitops-scaffolder.json': marker('acme-prod'),
      'clusters/acme-prod/secrets/db.yaml': 'kind: Secret\n',
      'clusters/acme-dev/.gitops-scaffolder.json': marker('acme-dev'),
      'clusters/acme-dev/kustomization.yaml': 'resources: []\n',
    });
    const r = await retire(repo, 'acme-prod');
    expect(r.code).toBe(0);
    // acme-dev's next `sops -e` needs the rule; it names no folder of acme-prod.
    expect(readFileSync(join(repo, '.sops.yaml'), 'utf8')).toBe(sops);
  });
});

describe('generate-gitops-env retire, odd names', () => {
  it('refuses a cluster name no tag can hold as bad input (exit 2, a sentence), not an internal error with a git command line', async () => {
    const repo = repoOf('retire-odd', {
      'clusters/acme prod/.gitops-scaffolder.json': marker('acme prod'),
      'clusters/acme prod/kustomization.yaml': 'resources: []\n',
    });
    const r = await retire(repo, 'acme prod');
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('Command failed');
    expect(existsSync(join(repo, 'clusters/acme prod/kustomization.yaml'))).toBe(true);
  });
});
