import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { computeDrift } from '#libs/generator/lifecycle/drift';
import { loadConfig } from '../../src/config/config';
import { localGitWorkspaces } from '../../src/git/git.module';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { bareRepo } from '../support/services';
import { runStepsToEnd } from '../support/step-harness';

jest.setTimeout(120_000);

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * The service's passes (the real step handlers on the in-memory event store, a real git remote) with
 * TEMPLATE_DIR a git working copy: the marker they push records the commit the service's template is at
 * and the request's inputs, as the command line's does, and drift on a clone of the result finds none.
 */
describe("the service's passes record what made the environment", () => {
  const template = tempDir('steps-provenance-ref');
  cpSync(SHIPPED_TEMPLATE, template, { recursive: true });
  git(template, 'init', '-q', '-b', 'main');
  git(template, 'add', '-A');
  git(template, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'reference A');
  const PASSWORD = 'RegistryPassword-provenance-1';
  const config = loadConfig(
    {
      TEMPLATE_DIR: template,
      REFERENCE_ENV: 'development',
      WORK_DIR: tempDir('steps-provenance-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
      REGISTRY_SERVER: 'r.example.com',
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: PASSWORD,
    },
    { requireApiKey: false },
  );

  it('pushes a marker with the template commit and the inputs (no secret value); drift of the pushed tree is none', async () => {
    const remote = bareRepo();
    const { events } = await runStepsToEnd({
      settings: config.steps,
      workspaces: localGitWorkspaces(config),
      certPem: makeRsaCert().certPem,
      request: {
        cluster_name: 'prov',
        domain: 'prov.example.com',
        region: 'eu-west-1',
        acme_email: 'ops@prov.example.com',
        repo_url: remote.url,
        branch: 'main',
        requested_by: 'team-prov',
      },
    });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    const text = execFileSync('git', ['--git-dir', remote.dir, 'show', 'main:clusters/prov/.gitops-scaffolder.json'], {
      encoding: 'utf8',
    });
    expect(JSON.parse(text)).toMatchObject({
      cluster_name: 'prov',
      owner: 'team-prov',
      marker_version: 2,
      reference_commit: git(template, 'rev-parse', 'HEAD'),
      inputs: {
        acme_email: 'ops@prov.example.com',
        pass: 'full',
        registry_credentials: true,
        source_url: remote.url,
        source_branch: 'main',
      },
    });
    expect(text).not.toContain(PASSWORD);

    const clone = join(tempDir('steps-provenance-clone'), 'repo');
    execFileSync('git', ['clone', '-q', remote.dir, clone]);
    const report = await computeDrift({ repoDir: clone, templateDir: template, clusterName: 'prov' });
    expect(report).toMatchObject({ drifted: false, commits_behind: 0, changed: [], added: [], missing: [] });
    expect(report.credentials_not_compared.length).toBeGreaterThan(0);
  });
});
