import { makeRsaCert } from '../support/certs';
import { createBody } from '../support/run-fixtures';
import { api, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo, gitLog, runCommits } from '../support/services';

jest.setTimeout(240_000);

/**
 * Many clusters scaffolded into one fleet repository at once, the normal case for a platform: every
 * push that finds the branch moved is redone on the new head (jittered backoff until the push
 * deadline), so every run lands. Before, 1 in 20 failed with "push rejected (fetch first)".
 */
describe('20 runs into one repository at once', () => {
  const stack = useServiceStack(() => ({ MAX_CREATES_PER_MINUTE_PER_KEY: '100', MAX_ACTIVE_RUNS_PER_KEY: '100' }));
  const cert = makeRsaCert();

  it('all succeed, each with its two commits, none pushed twice', async () => {
    const remote = bareRepo();
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(stack.svc.base, 'POST', '/api/v1/scaffolds', createBody(`fleet-${i}`, remote.url, cert.certPem)),
      ),
    );
    expect(created.map((c) => c.status)).toEqual(created.map(() => 202));
    const outcomes = await Promise.all(created.map((c) => untilTerminal(stack.svc.base, c.json.id, 200_000)));
    expect(outcomes.filter((o) => o.status !== 'succeeded').map((o) => o.message)).toEqual([]);
    for (const c of created) expect(runCommits(remote.dir, c.json.id).sort()).toEqual(['full', 'infra']);
    expect(gitLog(remote.dir)).toHaveLength(1 + 40);
  });
});
