/**
 * The environments' queries against histories a hostile or unlucky fleet can hold. The read-model is faked with the
 * filters its SQL applies (RunReadModel.environmentRuns: owner = COALESCE(cluster_owner, requested_by), clusters), so
 * the queries' own rule is what is tested: the folder's first owner decides whose environment it is, and the owner
 * sees every run of it (an admin's run of the folder without cluster_owner included). The service records
 * cluster_owner for an admin's run, so such histories come from a race of two first runs or runs from before it.
 */
import { initialState, type RunState } from '#libs/run-decider';
import type { CallerIdentity } from '../common/api-keys';
import type { RunReadModel } from '../projection/run-read-model';
import { EnvironmentQueries } from './environment-queries';
import type { ReferenceHistory } from './reference-history';

const REPO = 'https://git.example.com/org/fleet.git';
const run = (id: string, requestedBy: string, commit: string, clusterOwner?: string) => ({
  id,
  state: {
    ...initialState,
    status: 'succeeded',
    infraCommit: 'a'.repeat(40),
    fullCommit: 'b'.repeat(40),
    reference: { commit, dirty: false },
    request: {
      cluster_name: 'shop',
      domain: 'shop.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo_url: REPO,
      branch: 'main',
      requested_by: requestedBy,
      ...(clusterOwner ? { cluster_owner: clusterOwner } : {}),
      target: { kind: 'age_recipients', recipients: ['age1x'] },
    },
  } as unknown as RunState,
});

function queriesOver(runs: Array<ReturnType<typeof run>>) {
  const readModel = {
    environmentRuns: async ({ owner, clusterNames }: { owner?: string; clusterNames?: string[] }) =>
      runs.filter(
        (r) =>
          (owner === undefined || (r.state.request!.cluster_owner ?? r.state.request!.requested_by) === owner) &&
          (clusterNames === undefined || clusterNames.includes(r.state.request!.cluster_name)),
      ),
  } as unknown as RunReadModel;
  const history: ReferenceHistory = { newest: async () => undefined, behind: async () => undefined };
  return new EnvironmentQueries(readModel, history);
}
const caller = (name: string, role: 'admin' | 'operator' = 'operator') => ({ name, role }) as CallerIdentity;

describe('environments, attacked', () => {
  it("keeps a folder another key owns out of a key's answers even when an admin ran it for that key later", async () => {
    // bob's run made the folder; an admin later ran the same folder for alice (cluster_owner alice).
    const queries = queriesOver([run('r1', 'bob', '1'.repeat(40)), run('r2', 'root', '2'.repeat(40), 'alice')]);
    const asAdmin = await queries.list({}, caller('root', 'admin'));
    expect(asAdmin.items.map((e) => e.owner)).toEqual(['bob']);
    const id = asAdmin.items[0].id;
    // The folder's first owner (bob) decides: alice sees nothing of it, a 404 like an unknown id.
    expect((await queries.list({}, caller('alice'))).items).toEqual([]);
    await expect(queries.get(id, caller('alice'))).rejects.toMatchObject({ status: 404 });
  });

  it('shows the owner the same environment the admin sees (every run of the folder, the newest reference commit)', async () => {
    // alice's folder; an admin ran it again without cluster_owner, with a newer reference.
    const queries = queriesOver([run('r1', 'alice', '1'.repeat(40)), run('r2', 'root', '2'.repeat(40))]);
    const [asAdmin] = (await queries.list({}, caller('root', 'admin'))).items;
    expect(asAdmin.owner).toBe('alice');
    const asAlice = await queries.get(asAdmin.id, caller('alice'));
    expect([asAlice.runs, asAlice.reference_commit, asAlice.last_run.id]).toEqual([
      asAdmin.runs,
      asAdmin.reference_commit,
      asAdmin.last_run.id,
    ]);
  });
});
