/**
 * The full pass rehearsed before the infra pass writes anything. A run pushes its infra pass first and its full
 * pass only once the new cluster is up (its sealing certificate fetched), so a problem only the full pass meets (a
 * credential nobody supplied, a layer that does not build, a leftover a strict run refuses) used to stop a run
 * after its infra pass was pushed, leaving a half-made cluster. An infra pass now also plans the full pass on the
 * same tree, with the keys the run will have or throwaway ones until the cluster's own are known, and both passes'
 * problems are reported together. Nothing of the rehearsal is written or kept, its credentials included.
 */
import type { GenerateOptions, GenerationPlan } from './context';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import { THROWAWAY_AGE_RECIPIENT, THROWAWAY_SEALING_CERT } from './throwaway-keys';

type Finding = GeneratorInputError | GeneratorValidationError;
type Attempt = { ok: true; plan: GenerationPlan } | { ok: false; error: Finding };

/** Whether a pass with these options rehearses the full pass: an infra pass, unless told not to. */
export const rehearsesFullPass = (options: GenerateOptions) =>
  options.pass === 'infra' && options.rehearseFullPass !== false;

/** The full pass the run will make after this infra pass: the same inputs, with throwaway keys where the cluster's are not known yet. */
export function rehearsalOptions(infra: GenerateOptions): GenerateOptions {
  const sops = infra.secretsBackend === 'sops';
  return {
    ...infra,
    pass: 'full',
    sealingCertPem: sops ? undefined : (infra.sealingCertPem ?? THROWAWAY_SEALING_CERT),
    ageRecipients: sops && !infra.ageRecipients?.length ? [THROWAWAY_AGE_RECIPIENT] : infra.ageRecipients,
  };
}

/**
 * The pass planned by `plan`, and, for an infra pass, the full pass rehearsed after it on the same tree. A finding
 * of either (bad input, a tree that fails its checks) is reported with the other's: one error naming both passes'
 * problems. Anything else (an abort, a fault) ends it at once, except in a rehearsal after the infra pass was already
 * refused: that refusal is the answer. Not rehearsed: what only the cluster's own certificate decides (a re-scaffold
 * keeping some SealedSecrets sealed for it while others get new credentials), which the full pass still refuses itself.
 */
export async function planWithRehearsal(
  plan: (options: GenerateOptions) => Promise<GenerationPlan>,
  options: GenerateOptions,
): Promise<GenerationPlan> {
  const own = await attempt(() => plan(options));
  if (!rehearsesFullPass(options)) return outcomeOf(own);
  const full = () => attempt(() => plan(rehearsalOptions(options)));
  if (!own.ok) {
    // The refused infra pass is reported whatever becomes of the rehearsal (an abort, a fault): the rehearsal only adds.
    const rehearsed = await full().catch(() => undefined);
    throw withFullPassFinding(own.error, rehearsed);
  }
  const rehearsed = await full();
  if (rehearsed.ok) return { ...own.plan, rehearsal: rehearsed.plan.summary };
  const [first, ...rest] = lines(rehearsed.error);
  throw sameClass(rehearsed.error, [
    `refused before the infra pass writes anything, as the full pass that follows it would be: ${first}`,
    ...rest,
  ]);
}

async function attempt(work: () => Promise<GenerationPlan>): Promise<Attempt> {
  try {
    return { ok: true, plan: await work() };
  } catch (e) {
    if (e instanceof GeneratorInputError || e instanceof GeneratorValidationError) return { ok: false, error: e };
    throw e;
  }
}

function outcomeOf(attempted: Attempt): GenerationPlan {
  if (!attempted.ok) throw attempted.error;
  return attempted.plan;
}

const lines = (e: Error) => e.message.split('\n');

/** The infra pass's finding, with the full pass's added when it has one of its own (one found in both is named once). */
function withFullPassFinding(infra: Finding, full: Attempt | undefined): Finding {
  if (!full || full.ok || full.error.message === infra.message) return infra;
  const [infraFirst, ...infraRest] = lines(infra);
  const [fullFirst, ...fullRest] = lines(full.error);
  // The first line is what the command line prints: it names both passes' first problems.
  return sameClass(infra, [
    `${infraFirst}; the full pass that follows would also be refused: ${fullFirst}`,
    ...infraRest,
    ...fullRest,
  ]);
}

function sameClass(like: Finding, message: string[]): Finding {
  const text = message.join('\n');
  return like instanceof GeneratorInputError ? new GeneratorInputError(text) : new GeneratorValidationError(text);
}
