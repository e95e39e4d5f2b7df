import type { GenerateOptions, GenerationPlan } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { planWithRehearsal, rehearsalOptions } from './rehearsal';
import { THROWAWAY_AGE_RECIPIENT, THROWAWAY_SEALING_CERT } from './throwaway-keys';

const infra: GenerateOptions = {
  repoDir: '/nowhere',
  clusterName: 'c',
  domain: 'c.example.com',
  region: 'eu-west-1',
  acmeEmail: 'ops@c.example.com',
  pass: 'infra',
};

/** A planner that answers each pass as told: a plan whose summary names the pass, or the error given. */
function planner(outcomes: { infra?: Error; full?: Error }) {
  const seen: GenerateOptions[] = [];
  const plan = async (options: GenerateOptions) => {
    seen.push(options);
    const error = outcomes[options.pass];
    if (error) throw error;
    return { summary: { pass: options.pass } } as unknown as GenerationPlan;
  };
  return { plan, seen };
}

describe('the full pass rehearsed by the infra pass', () => {
  it('plans the full pass after the infra pass with throwaway keys where the cluster has none yet, and keeps its summary', async () => {
    const { plan, seen } = planner({});
    const planned = await planWithRehearsal(plan, infra);
    expect(seen.map((o) => o.pass)).toEqual(['infra', 'full']);
    expect(seen[1].sealingCertPem).toBe(THROWAWAY_SEALING_CERT);
    expect(planned.summary.pass).toBe('infra');
    expect(planned.rehearsal?.pass).toBe('full');
  });

  it("rehearses with the run's own keys when it has them", () => {
    expect(rehearsalOptions({ ...infra, sealingCertPem: 'PEM' }).sealingCertPem).toBe('PEM');
    expect(rehearsalOptions({ ...infra, secretsBackend: 'sops', ageRecipients: ['age1own'] })).toMatchObject({
      sealingCertPem: undefined,
      ageRecipients: ['age1own'],
    });
    expect(rehearsalOptions({ ...infra, secretsBackend: 'sops' }).ageRecipients).toEqual([THROWAWAY_AGE_RECIPIENT]);
  });

  it('names both passes’ problems in one error, the first line naming each, and a problem both share once', async () => {
    const both = planner({
      infra: new GeneratorInputError('infra problem\ninfra detail'),
      full: new GeneratorValidationError('full problem\nfull detail'),
    });
    const error = await planWithRehearsal(both.plan, infra).catch((e) => e);
    expect(error).toBeInstanceOf(GeneratorInputError);
    expect(error.message).toBe(
      'infra problem; the full pass that follows would also be refused: full problem\ninfra detail\nfull detail',
    );

    const shared = planner({ infra: new GeneratorInputError('same'), full: new GeneratorInputError('same') });
    expect((await planWithRehearsal(shared.plan, infra).catch((e) => e)).message).toBe('same');

    const fullOnly = planner({ full: new GeneratorValidationError('layer apps does not build') });
    const refused = await planWithRehearsal(fullOnly.plan, infra).catch((e) => e);
    expect(refused).toBeInstanceOf(GeneratorValidationError);
    expect(refused.message).toBe(
      'refused before the infra pass writes anything, as the full pass that follows it would be: layer apps does not build',
    );
  });

  it('does not rehearse a full pass, or an infra pass told not to; and stops at a fault that is no finding', async () => {
    for (const options of [
      { ...infra, pass: 'full' as const },
      { ...infra, rehearseFullPass: false },
    ]) {
      const { plan, seen } = planner({});
      expect((await planWithRehearsal(plan, options)).rehearsal).toBeUndefined();
      expect(seen).toHaveLength(1);
    }
    const faulty = planner({ infra: new Error('aborted') });
    await expect(planWithRehearsal(faulty.plan, infra)).rejects.toThrow('aborted');
    expect(faulty.seen).toHaveLength(1);
    const rehearsalFault = planner({ full: new Error('kubectl crashed') });
    await expect(planWithRehearsal(rehearsalFault.plan, infra)).rejects.toThrow('kubectl crashed');
  });

  it('reports a refused infra pass as such when its rehearsal then stops on a fault (an abort, a crash)', async () => {
    const { plan } = planner({
      infra: new GeneratorInputError('--domain must be a DNS name'),
      full: new Error('aborted'),
    });
    const error = await planWithRehearsal(plan, infra).catch((e) => e);
    expect(error).toBeInstanceOf(GeneratorInputError);
    expect(error.message).toBe('--domain must be a DNS name');
  });
});
