/**
 * `generate-gitops-env retire` on two environments the command line scaffolded from the shipped reference into one
 * repository: exactly the retired one's files go, a shared kustomization's entry for it goes, the other environment
 * and the shared folders stay byte for byte, HEAD is tagged first and the printed command restores it; every
 * refusal writes and tags nothing.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { readTree, tempDir } from '../support/files';
import { generatorCli } from '../support/generator-cli';
import { git, scaffoldWithCli } from '../support/lifecycle';

describe('generate-gitops-env retire', () => {
  const repo = tempDir('retire-repo');
  const certFile = join(tempDir('retire-cert'), 'cert.pem');
  writeFileSync(certFile, makeRsaCert().certPem);
  let live: Record<string, string>;

  beforeAll(async () => {
    git(repo, 'init', '-q', '-b', 'main');
    for (const cluster of ['acme-prod', 'acme-dev'])
      expect(await scaffoldWithCli(repo, SHIPPED_TEMPLATE, cluster, certFile)).toMatchObject({ code: 0 });
    // A fleet kustomization of the user's listing both clusters, with a comment the edit keeps.
    writeFileSync(
      join(repo, 'clusters/kustomization.yaml'),
      '# every cluster of the fleet\nresources:\n  - acme-prod\n  - ./acme-dev\n',
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'two clusters');
    live = readTree(repo);
  }, 180_000);

  const retire = (...args: string[]) => generatorCli(['retire', '--repo', repo, ...args]);
  const tags = () => git(repo, 'tag', '--list');
  const unchanged = () => {
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(tags()).toBe('');
  };

  it('refuses, writing and tagging nothing, when the confirmation differs, no marker names the cluster, or the folders hold uncommitted work', async () => {
    const wrong = await retire('--cluster-name', 'acme-prod', '--confirm', 'acme-dev');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('does not repeat the cluster');
    unchanged();
    const none = await retire('--cluster-name', 'acme-test', '--confirm', 'acme-test');
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('no ownership marker')]);
    unchanged();

    writeFileSync(join(repo, 'clusters/acme-prod/apps/notes.txt'), 'an edit nobody committed\n');
    const dirty = await retire('--cluster-name', 'acme-prod', '--confirm', 'acme-prod');
    expect([dirty.code, dirty.stderr]).toEqual([2, expect.stringContaining('uncommitted, untracked or ignored files')]);
    expect(tags()).toBe('');
    git(repo, 'clean', '-q', '-f');
    unchanged();
  });

  it('refuses while a Flux Kustomization outside the environment still applies one of its folders', async () => {
    mkdirSync(join(repo, 'hub'), { recursive: true });
    writeFileSync(
      join(repo, 'hub/spokes.yaml'),
      'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: acme-prod-apps, namespace: flux-system}\nspec:\n  path: ./clusters/acme-prod/apps\n  interval: 10m\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n',
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a hub applying a spoke');
    const applied = await retire('--cluster-name', 'acme-prod', '--confirm', 'acme-prod');
    expect(applied.code).toBe(2);
    expect(applied.stderr).toContain('hub/spokes.yaml (Kustomization acme-prod-apps, path ./clusters/acme-prod/apps)');
    unchanged();
    git(repo, 'rm', '-q', '-r', 'hub');
    git(repo, 'commit', '-q', '-m', 'no hub');
  });

  it('plans without writing on --dry-run, then removes exactly the environment and its fleet entry, tagging the last live commit', async () => {
    const planned = await generatorCli([
      'retire',
      '--repo',
      repo,
      '--cluster-name',
      'acme-prod',
      '--confirm',
      'acme-prod',
      '--dry-run',
      '--json',
    ]);
    expect(planned.code).toBe(0);
    const plan = JSON.parse(planned.stdout);
    unchanged();
    const head = git(repo, 'rev-parse', 'HEAD');
    const prodFiles = Object.keys(live).filter((f) => f.startsWith('clusters/acme-prod/'));
    expect(plan).toMatchObject({
      cluster_name: 'acme-prod',
      folders: ['clusters/acme-prod'],
      entries_removed: [{ file: 'clusters/kustomization.yaml', entry: 'acme-prod' }],
      tagged_commit: head,
      dry_run: true,
    });
    expect([...plan.files_removed].sort()).toEqual(prodFiles.sort());

    const done = await retire('--cluster-name', 'acme-prod', '--confirm', 'acme-prod');
    expect(done.code).toBe(0);
    const tag = git(repo, 'tag', '--list');
    expect(tag).toMatch(/^retired\/acme-prod\/\d{8}T\d{6}Z$/);
    expect(git(repo, 'rev-parse', `${tag}^{commit}`)).toBe(head);
    const after = readTree(repo);
    expect(existsSync(join(repo, 'clusters/acme-prod'))).toBe(false);
    // Everything else byte for byte: the other environment, the shared base, the edited fleet file aside.
    const others = Object.keys(live).filter(
      (f) => !f.startsWith('clusters/acme-prod/') && f !== 'clusters/kustomization.yaml',
    );
    for (const file of others) expect([file, after[file]]).toEqual([file, live[file]]);
    expect(after['clusters/kustomization.yaml']).toBe('# every cluster of the fleet\nresources:\n  - ./acme-dev\n');

    // The printed command brings the environment back as it was.
    const restore = done.stdout
      .split('\n')
      .find((l) => l.startsWith('restore with: '))!
      .slice('restore with: '.length);
    const [, ...args] = restore.split(' ');
    git(repo, ...args);
    expect(readTree(repo)).toEqual(live);
  });
});
