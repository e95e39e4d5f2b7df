import type { GenerateSummary, Leftover } from '#libs/generator';
import { logLines, stepContext } from '../../../../test/support/step-context';
import { gateRehearsedLeftovers } from './leftovers';

const LEFTOVER: Leftover = {
  file: 'clusters/lime/apps/issuer.yaml',
  object: 'ClusterIssuer letsencrypt',
  field: 'spec.acme.email',
  value: 'ops@reference.example.com',
  identifier: 'acme-email',
  matched: 'ops@reference.example.com',
  flag: '--replace ops@reference.example.com=ops@lime.example.com',
};

/** A full pass's summary as the infra pass's rehearsal returns it, with the given leftovers. */
const rehearsal = (leftovers: Leftover[]) => ({ pass: 'full', leftovers, leftovers_not_listed: 0 }) as GenerateSummary;

describe("the full pass's leftovers found by the infra pass's rehearsal", () => {
  it('refuse a strict run before its infra pass is staged, naming each in request words', async () => {
    const double = stepContext({ request: { strict: true } });
    const refused = gateRehearsedLeftovers(double.ctx, rehearsal([LEFTOVER]));
    await expect(refused).rejects.toMatchObject({ retryable: false });
    await expect(refused).rejects.toThrow(
      "strict: the run is refused before its infra pass is pushed, as its full pass would leave 1 identifier(s) of the reference in the new cluster's files: clusters/lime/apps/issuer.yaml",
    );
    await expect(refused).rejects.toThrow('(replace {"ops@reference.example.com":"ops@lime.example.com"})');
    expect(await logLines(double)).toEqual([
      expect.stringMatching(/^full pass: leftover clusters\/lime\/apps\/issuer/),
    ]);
  });

  it('let a run that is not strict go on, listing nothing yet (its full pass lists them when it runs)', async () => {
    const double = stepContext({ request: { strict: false } });
    await gateRehearsedLeftovers(double.ctx, rehearsal([LEFTOVER]));
    await gateRehearsedLeftovers(stepContext({ request: { strict: true } }).ctx, rehearsal([]));
    await gateRehearsedLeftovers(stepContext({ request: { strict: true } }).ctx, undefined);
    expect(await logLines(double)).toEqual([]);
  });
});
