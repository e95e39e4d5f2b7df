import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  GenerateOptions,
  GenerateResult,
  IN_PROCESS_GENERATOR,
  SHIPPED_TEMPLATE,
  TreeGenerator,
} from '#libs/generator';
import { loadConfig } from '../../src/config/config';
import { localGitWorkspaces } from '../../src/git/git.module';
import { makeRsaCert } from '../support/certs';
import { allFiles, readTree, tempDir } from '../support/files';
import { bareRepo, gitLog, pushAsAnotherWriter } from '../support/services';
import { runStepsToEnd, StepRun } from '../support/step-harness';

jest.setTimeout(120_000);

/**
 * Another writer pushes to the fleet repository between a pass's generation and its push (the normal
 * case when many clusters are scaffolded into one repository). The real step handlers against a real
 * remote: the pass is rebased onto the new head and pushed, and generated again only when the other
 * writer changed the same files.
 */
describe('a pass whose push loses the race for the branch', () => {
  const cert = makeRsaCert();
  const config = loadConfig(
    {
      WORK_DIR: tempDir('push-race-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
      REGISTRY_SERVER: 'r.example.com',
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: 'RegistryPassword-1',
    },
    { requireApiKey: false },
  );
  const settings = config.steps;
  const workspaces = localGitWorkspaces(config);
  const templateBase = readTree(join(SHIPPED_TEMPLATE, 'base'));
  /** The request of every run here: cluster kiwi into the remote's main branch. */
  const kiwiRequest = (repoUrl: string) => ({
    cluster_name: 'kiwi',
    domain: 'kiwi.example.com',
    region: 'eu-west-1',
    acme_email: 'ops@kiwi.example.com',
    repo_url: repoUrl,
    branch: 'main',
    requested_by: 't',
  });

  /**
   * Runs the steps; `interfere` runs after each generation (pass, call number) with the remote, the run
   * and what the pass generated. `fleet`: files the remote holds before the run (other clusters' folders);
   * `beforeEvent` runs before each new event of the run is handed to the steps.
   */
  async function race(
    interfere: (pass: string, call: number, remote: { dir: string }, run: StepRun, generated: GenerateResult) => void,
    fleet?: Record<string, string>,
    beforeEvent?: (type: string, remote: { dir: string }) => void,
  ) {
    const remote = bareRepo();
    if (fleet) pushAsAnotherWriter(remote.dir, fleet, 'fleet');
    const generated: string[] = [];
    const onDisk: string[][] = [];
    let current: StepRun | undefined;
    const generator: TreeGenerator = {
      ...IN_PROCESS_GENERATOR,
      async generate(options: GenerateOptions) {
        const result = await IN_PROCESS_GENERATOR.generate(options);
        generated.push(options.pass);
        onDisk.push(allFiles(options.repoDir));
        interfere(options.pass, generated.length, remote, current!, result);
        return result;
      },
    };
    const request = kiwiRequest(remote.url);
    const run = await runStepsToEnd({
      settings,
      workspaces,
      certPem: cert.certPem,
      request,
      generator,
      beforeEach: async (r, event) => {
        current = r;
        beforeEvent?.(event.type, remote);
      },
    });
    const logs = (await run.logs.read(run.runId)).map((l) => l.msg);
    return {
      ...run,
      remote,
      generated,
      onDisk,
      logs,
      subjects: gitLog(remote.dir).map((l) => l.split(' ').slice(1).join(' ')),
    };
  }

  const show = (gitDir: string, what: string) =>
    execFileSync('git', ['--git-dir', gitDir, 'show', '--format=%P', '--name-only', what], { encoding: 'utf8' });

  it('rebases onto another cluster’s commit and pushes without generating again', async () => {
    const { events, generated, logs, subjects, remote } = await race((pass, call, r) => {
      if (call === 1)
        pushAsAnotherWriter(r.dir, { 'clusters/other/README.md': 'another cluster\n' }, 'scaffold(other): infra pass');
    });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(generated).toEqual(['infra', 'full']);
    expect(subjects).toEqual([
      'scaffold(kiwi): full pass',
      'scaffold(kiwi): infra pass',
      'scaffold(other): infra pass',
      'seed',
    ]);
    const infra = events.find((e) => e.type === 'InfraPushed')!.data as { commit: string };
    // The commit InfraPushed names is the one on the branch (the rebased one), its parent the other writer's.
    const [parent] = show(remote.dir, infra.commit).trim().split('\n');
    expect(parent).toBe(gitLog(remote.dir)[2].split(' ')[0]);
    expect(logs.some((l) => /push rejected .*rebasing onto the new head/.test(l))).toBe(true);
  });

  it('generates the pass again when the other writer changed files the pass wrote, and keeps theirs', async () => {
    const theirs = { ...Object.fromEntries(Object.entries(templateBase).map(([k, v]) => [`base/${k}`, v])) };
    theirs['base/web/service.yaml'] = `# tuned by another writer\n${theirs['base/web/service.yaml']}`;
    const { events, generated, logs, remote } = await race((pass, call, r) => {
      if (pass === 'full' && call === 2) pushAsAnotherWriter(r.dir, theirs, 'platform: shared base');
    });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(generated).toEqual(['infra', 'full', 'full']);
    expect(logs.some((l) => /full pass conflicts with a commit on main; generating it again/.test(l))).toBe(true);
    expect(
      execFileSync('git', ['--git-dir', remote.dir, 'show', 'main:base/web/service.yaml'], { encoding: 'utf8' }),
    ).toMatch(/^# tuned by another writer/);
    const full = events.find((e) => e.type === 'FullPushed')!.data as { commit: string };
    const files = show(remote.dir, full.commit).trim().split('\n').slice(1).filter(Boolean);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => !f.startsWith('clusters/kiwi/'))).toEqual([]);
  });

  it('takes the pass as done when the commit that moved the branch is this run’s own (a duplicate delivery)', async () => {
    const { events, generated, subjects, remote } = await race((pass, call, r, run) => {
      if (call === 1)
        pushAsAnotherWriter(
          r.dir,
          { 'notes/kiwi.txt': 'pushed by the other delivery\n' },
          `scaffold(kiwi): infra pass\n\nScaffold-Run: ${run.runId}\nScaffold-Pass: infra`,
        );
    });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(generated).toEqual(['infra', 'full']);
    expect(subjects.filter((s) => s === 'scaffold(kiwi): infra pass')).toHaveLength(1);
    const infra = events.find((e) => e.type === 'InfraPushed')!.data as { commit: string };
    expect(`${infra.commit} scaffold(kiwi): infra pass`).toBe(gitLog(remote.dir)[1]);
  });

  it('stops generating a pass once it finds the commit an earlier attempt pushed, and takes that commit', async () => {
    const remote = bareRepo();
    let earlier = '';
    const stopped: string[] = [];
    const generator: TreeGenerator = {
      ...IN_PROCESS_GENERATOR,
      async generate(options: GenerateOptions, signal?: AbortSignal) {
        // The infra pass's generation lasts until it is stopped (without the search beside it, for ever).
        if (options.pass === 'infra')
          await new Promise((_, reject) =>
            signal?.addEventListener('abort', () => (stopped.push(options.pass), reject(signal.reason))),
          );
        return IN_PROCESS_GENERATOR.generate(options, signal);
      },
    };
    const run = await runStepsToEnd({
      settings,
      workspaces,
      certPem: cert.certPem,
      request: kiwiRequest(remote.url),
      generator,
      // What an earlier delivery of the infra pass pushed before its process died.
      beforeEach: async (r, event) => {
        if (event.type === 'ScaffoldRequested')
          earlier = pushAsAnotherWriter(
            remote.dir,
            { 'notes/kiwi.txt': 'pushed by the earlier attempt\n' },
            `scaffold(kiwi): infra pass\n\nScaffold-Run: ${r.runId}\nScaffold-Pass: infra`,
          );
      },
    });
    expect(stopped).toEqual(['infra']);
    expect(run.events.find((e) => e.type === 'InfraPushed')?.data).toMatchObject({ commit: earlier });
    expect(run.events.at(-1)).toMatchObject({ type: 'ScaffoldSucceeded' });
    expect(gitLog(remote.dir).filter((l) => l.endsWith('scaffold(kiwi): infra pass'))).toEqual([
      `${earlier} scaffold(kiwi): infra pass`,
    ]);
  });

  describe('into a fleet repository holding other clusters (sparse working copies)', () => {
    const marker = (name: string) =>
      JSON.stringify({
        cluster_name: name,
        domain: `${name}.example.com`,
        region: 'eu-west-1',
        reference_env: 'development',
      });
    /** The shared base the first cluster copied in, and two other clusters' folders. */
    const fleet: Record<string, string> = {
      ...Object.fromEntries(Object.entries(templateBase).map(([k, v]) => [`base/${k}`, v])),
      'clusters/apple/.gitops-scaffolder.json': marker('apple'),
      'clusters/apple/infrastructure/kustomization.yaml': 'resources: []\n',
      'clusters/pear/.gitops-scaffolder.json': marker('pear'),
      'clusters/pear/apps/kustomization.yaml': 'resources: []\n',
    };
    const otherClusters = (gitDir: string, rev: string) =>
      execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', rev, '--', 'clusters/apple', 'clusters/pear'], {
        encoding: 'utf8',
      });
    const changedIn = (gitDir: string, commit: string) =>
      show(gitDir, commit).trim().split('\n').slice(1).filter(Boolean);

    it("generates without the other clusters' folders on disk and leaves them as they were in every pushed commit", async () => {
      const { events, generated, onDisk, remote } = await race(() => undefined, fleet);
      expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
      expect(generated).toEqual(['infra', 'full']);
      for (const files of onDisk) {
        expect(files.filter((f) => /^clusters\/(apple|pear)\//.test(f))).toEqual([]);
        expect(files).toContain('base/kustomization.yaml');
      }
      const before = otherClusters(remote.dir, 'main~2');
      expect(before).toMatch(/clusters\/pear\/apps\/kustomization.yaml/);
      expect(otherClusters(remote.dir, 'main')).toBe(before);
      for (const type of ['InfraPushed', 'FullPushed']) {
        const { commit } = events.find((e) => e.type === type)!.data as { commit: string };
        const files = changedIn(remote.dir, commit);
        expect(files.length).toBeGreaterThan(0);
        expect(files.filter((f) => !f.startsWith('clusters/kiwi/'))).toEqual([]);
      }
    });

    it("rebases onto a commit into another cluster's folder and the shared base without generating again", async () => {
      const { events, generated, remote } = await race((pass, call, r) => {
        if (call === 1)
          pushAsAnotherWriter(
            r.dir,
            { 'clusters/pear/apps/kustomization.yaml': 'resources: [pear.yaml]\n', 'base/notes.md': 'shared\n' },
            'scaffold(pear): full pass',
          );
      }, fleet);
      expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
      expect(generated).toEqual(['infra', 'full']);
      const infra = events.find((e) => e.type === 'InfraPushed')!.data as { commit: string };
      expect(changedIn(remote.dir, infra.commit).filter((f) => !f.startsWith('clusters/kiwi/'))).toEqual([]);
      expect(otherClusters(remote.dir, 'main')).toBe(otherClusters(remote.dir, infra.commit));
      expect(otherClusters(remote.dir, 'main')).not.toBe(otherClusters(remote.dir, 'main~3'));
    });

    it("generates the pass again when another writer changed a file the pass wrote in the cluster's folder", async () => {
      let theirs = '';
      const { events, generated, logs, remote } = await race((pass, call, r, _run, result) => {
        if (pass !== 'full' || call !== 2) return;
        theirs = result.summary.paths_written.find((p) => p.startsWith('clusters/kiwi/') && p.endsWith('.yaml'))!;
        pushAsAnotherWriter(r.dir, { [theirs]: '# changed by another writer\n' }, 'another writer');
      }, fleet);
      expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
      expect(generated).toEqual(['infra', 'full', 'full']);
      expect(logs.some((l) => /full pass conflicts with a commit on main; generating it again/.test(l))).toBe(true);
      const full = events.find((e) => e.type === 'FullPushed')!.data as { commit: string };
      expect(gitLog(remote.dir)[1]).toMatch(/ another writer$/);
      expect(gitLog(remote.dir)[0].split(' ')[0]).toBe(full.commit);
      expect(changedIn(remote.dir, full.commit)).toContain(theirs);
    });

    it("works in the infra pass's working copy when the branch has not moved, and clones again when it has", async () => {
      const quiet = await race(() => undefined, fleet);
      expect(quiet.events.at(-1)?.type).toBe('ScaffoldSucceeded');
      expect(quiet.logs.filter((l) => /full pass works in the infra pass's working copy/.test(l))).toHaveLength(1);
      expect(quiet.onDisk[1]).toContain('clusters/kiwi/.gitops-scaffolder.json');

      const moved = await race(
        () => undefined,
        fleet,
        (type, r) => {
          if (type === 'InfraPushed') pushAsAnotherWriter(r.dir, { 'clusters/plum/a.yaml': 'a: 1\n' }, 'plum');
        },
      );
      expect(moved.events.at(-1)?.type).toBe('ScaffoldSucceeded');
      expect(moved.logs.filter((l) => /working copy/.test(l))).toEqual([]);
      expect(moved.subjects.slice(0, 3)).toEqual(['scaffold(kiwi): full pass', 'plum', 'scaffold(kiwi): infra pass']);
      // Neither copy is left behind in the work folder.
      expect(existsSync(join(settings.workDir, quiet.runId))).toBe(false);
      expect(existsSync(join(settings.workDir, moved.runId))).toBe(false);
    });
  });
});
