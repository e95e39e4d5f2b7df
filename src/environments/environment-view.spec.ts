import { initialState } from '#libs/run-decider';
import { environmentId, EnvironmentRun, groupByEnvironment, toEnvironmentView } from './environment-view';

const request = (repoUrl: string, extra: Record<string, unknown> = {}) =>
  ({
    cluster_name: 'shop',
    domain: 'shop.example.com',
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo_url: repoUrl,
    branch: 'main',
    requested_by: 'alice',
    target: { kind: 'age_recipients', recipients: ['age1x'] },
    ...extra,
  }) as EnvironmentRun['state']['request'];

const run = (
  id: string,
  state: Partial<EnvironmentRun['state']>,
  repoUrl = 'https://git.example.com/org/fleet.git',
): EnvironmentRun => ({
  id,
  state: { ...initialState, request: request(repoUrl), ...state },
});

describe('environments folded from runs', () => {
  it("is one environment whatever the repository URL's spelling, another per branch or cluster", () => {
    const spellings = [
      'https://git.example.com/org/fleet.git',
      'https://GIT.example.com/Org/Fleet',
      'ssh://git@git.example.com/org/fleet.git',
    ];
    expect(new Set(spellings.map((u) => environmentId(u, 'main', 'shop'))).size).toBe(1);
    expect(environmentId(spellings[0], 'staging', 'shop')).not.toBe(environmentId(spellings[0], 'main', 'shop'));
    expect(environmentId(spellings[0], 'main', 'shop-2')).not.toBe(environmentId(spellings[0], 'main', 'shop'));
    const groups = groupByEnvironment(spellings.map((u, i) => run(`r${i}`, { status: 'succeeded' }, u)));
    expect([...groups.values()].map((g) => g.map((r) => r.id))).toEqual([['r0', 'r1', 'r2']]);
  });

  it('is changing while a run is active, live once one succeeded, incomplete when none finished what it pushed', () => {
    const status = (...states: Array<Partial<EnvironmentRun['state']>>) =>
      toEnvironmentView(
        'e',
        states.map((s, i) => run(`r${i}`, s)),
        { newest: null, commitsBehind: null },
      ).status;
    expect(status({ status: 'succeeded' }, { status: 'running' })).toBe('changing');
    expect(status({ status: 'succeeded' }, { status: 'failed' })).toBe('live');
    expect(status({ status: 'failed', infraCommit: 'a'.repeat(40) })).toBe('incomplete');
  });

  it("shows the folder the newest run's passes wrote (a folder-form reference's, not clusters/<name>)", () => {
    const view = toEnvironmentView('e', [run('r1', { status: 'succeeded', gitopsPath: 'kubernetes/shop' })], {
      newest: null,
      commitsBehind: null,
    });
    expect(view.gitops_path).toBe('kubernetes/shop');
  });

  it("shows the newest run's reference revision, the newest successful run's commits, and the folder's first owner", () => {
    const view = toEnvironmentView(
      'e',
      [
        run('r1', {
          status: 'succeeded',
          infraCommit: 'i1',
          fullCommit: 'f1',
          reference: { commit: 'c1', dirty: true },
        }),
        {
          id: 'r2',
          state: {
            ...initialState,
            status: 'failed',
            infraCommit: 'i2',
            request: request('https://git.example.com/org/fleet', { requested_by: 'root', cluster_owner: 'alice' }),
          },
        },
      ],
      { newest: 'c3', commitsBehind: 2 },
    );
    expect(view).toMatchObject({
      gitops_path: 'clusters/shop',
      owner: 'alice',
      runs: 2,
      last_run: { id: 'r2', status: 'failed' },
      infra_commit: 'i1',
      full_commit: 'f1',
      reference_commit: 'c1',
      reference_dirty: true,
      reference_newest: 'c3',
      commits_behind: 2,
    });
  });
});
