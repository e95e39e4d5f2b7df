import { logLines, stepContext } from '../../../../../test/support/step-context';
import { infraPass } from './handler';

describe('infra-pass', () => {
  it('takes its commit already on the branch as done (a redelivery), and hands its working copy to the full pass', async () => {
    const double = stepContext({ alreadyPushed: 'c'.repeat(40) });
    expect(await infraPass.run(double.ctx)).toEqual({
      type: 'InfraPushed',
      data: { commit: 'c'.repeat(40), files_changed: 0 },
    });
    // The infrastructure pass clones (nothing to take over) and keeps its copy for the full pass.
    expect(double.workspaceCalls).toEqual(['clone', 'handOver /work/clone']);
    expect(await logLines(double)).toContain(`infra pass already on main as ${'c'.repeat(40)}; not pushing again`);
  });

  it('reads supplied credentials before anything is cloned: without the management cluster it fails at once', async () => {
    const double = stepContext({ request: { credentials_secret: { namespace: 'clusters', name: 'c1-credentials' } } });
    const failed = infraPass.run(double.ctx);
    await expect(failed).rejects.toThrow(/credentials_secret needs access to the management cluster/);
    await expect(failed).rejects.toMatchObject({ retryable: false });
    expect(double.workspaceCalls).toEqual([]);
  });
});
