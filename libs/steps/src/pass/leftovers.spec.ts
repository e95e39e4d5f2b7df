import type { GenerateSummary, Leftover } from '#libs/generator';
import { logLines, stepContext } from '../../../../test/support/step-context';
import { gateLeftovers } from './leftovers';

const leftover = (file: string): Leftover => ({
  file,
  object: 'ClusterIssuer letsencrypt',
  field: 'spec.acme.email',
  value: 'ops@reference.example.com',
  identifier: 'acme-email',
  matched: 'ops@reference.example.com',
  flag: '--replace ops@reference.example.com=ops@lime.example.com',
});
const INFRA = leftover('clusters/lime/infrastructure/issuer.yaml');
const FULL = leftover('clusters/lime/apps/issuer.yaml');

/** A pass's summary with the given leftovers (the infra pass's own, or the full pass its rehearsal planned). */
const summary = (pass: 'infra' | 'full', leftovers: Leftover[]) =>
  ({ pass, leftovers, leftovers_not_listed: 0 }) as unknown as GenerateSummary;

describe("a strict request's leftovers, the infra pass's and those its rehearsal of the full pass found", () => {
  it('refuse the run before its infra pass is staged, naming the full pass’s in request words', async () => {
    const double = stepContext({ request: { strict: true } });
    const refused = gateLeftovers(double.ctx, 'infra', summary('infra', []), summary('full', [FULL]));
    await expect(refused).rejects.toMatchObject({ retryable: false });
    await expect(refused).rejects.toThrow(
      "strict: the run is refused before its infra pass is pushed, as its full pass would leave 1 identifier(s) of the reference in the new cluster's files: clusters/lime/apps/issuer.yaml",
    );
    await expect(refused).rejects.toThrow('(replace {"ops@reference.example.com":"ops@lime.example.com"})');
    expect(await logLines(double)).toEqual([
      expect.stringMatching(/^full pass: leftover clusters\/lime\/apps\/issuer/),
    ]);
  });

  it('are named together in one refusal when both passes leave some', async () => {
    const double = stepContext({ request: { strict: true } });
    const refused = gateLeftovers(double.ctx, 'infra', summary('infra', [INFRA]), summary('full', [FULL]));
    await expect(refused).rejects.toThrow(
      /^strict: the infra pass is refused before anything of it is pushed, as it leaves 1 identifier\(s\) .*infrastructure\/issuer\.yaml.*; its full pass would also leave 1 identifier\(s\) .*apps\/issuer\.yaml.*\. Move each with the request field in brackets/,
    );
    expect(await logLines(double)).toHaveLength(2);
  });

  it('let a run that is not strict go on, listing its own pass’s only (the full pass lists its own when it runs)', async () => {
    const double = stepContext({ request: { strict: false } });
    await gateLeftovers(double.ctx, 'infra', summary('infra', [INFRA]), summary('full', [FULL]));
    expect(await logLines(double)).toEqual([
      expect.stringMatching(/^infra pass: leftover clusters\/lime\/infrastructure/),
    ]);
    await gateLeftovers(stepContext({ request: { strict: true } }).ctx, 'infra', summary('infra', []), undefined);
  });
});
