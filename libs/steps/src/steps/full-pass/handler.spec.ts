import { logLines, stepContext } from '../../../../../test/support/step-context';
import { fullPass } from './handler';

const infra = { type: 'InfraPushed' as const, data: { commit: 'a'.repeat(40), files_changed: 3 } };
const sops = { kind: 'age_recipients' as const, recipients: ['age1x'] };

describe('full-pass', () => {
  it("works in the infra pass's working copy when it was handed over, and removes it after", async () => {
    const double = stepContext({ target: sops, given: [infra], alreadyPushed: 'd'.repeat(40), handedOver: true });
    expect(await fullPass.run(double.ctx)).toEqual({
      type: 'FullPushed',
      data: { commit: 'd'.repeat(40), objects_sealed: 0 },
    });
    expect(double.workspaceCalls).toEqual(['takeOver', 'remove handed-over']);
    expect(await logLines(double)).toContain(
      "full pass works in the infra pass's working copy (main has not moved since)",
    );
  });

  it('clones when no copy was handed over; a SOPS run needs no certificate', async () => {
    const double = stepContext({ target: sops, given: [infra], alreadyPushed: 'd'.repeat(40) });
    expect((await fullPass.run(double.ctx)).type).toBe('FullPushed');
    expect(double.workspaceCalls).toEqual(['takeOver', 'clone', 'remove clone']);
  });

  it('seals for nothing but the run’s certificate: without it, it fails before any clone', async () => {
    const double = stepContext({ given: [infra] });
    const failed = fullPass.run(double.ctx);
    await expect(failed).rejects.toThrow('the sealing certificate of this run is missing');
    await expect(failed).rejects.toMatchObject({ retryable: false });
    expect(double.workspaceCalls).toEqual([]);
  });
});
