/**
 * A pass's leftovers (identifiers of the reference the generator found in the new cluster's files) as the service
 * reports them: in the words of a request (`replace {"OLD":"NEW"}`, `host_map`, `repo.flux_url`), in the run log,
 * and, for a strict request, as the refusal of the pass before anything of it is committed or pushed.
 */
import type { GenerateSummary, Pass } from '#libs/generator';
import { leftoverLine, requestFieldFor } from '#libs/generator';
import { requestOf, StepContext, StepError } from '../handler/step-handler';

/** Leftover lines one pass writes to the run log (the generator lists at most 500; the preview shows every one). */
const MAX_LOGGED = 100;
/** Leftovers named in a refusal itself (the run's message); the run log holds the rest. */
const MAX_IN_REFUSAL = 5;

/** The summary with each leftover's flag named as the request field that moves it (the CLI's flags mean nothing to a caller). */
export function inRequestWords(summary: GenerateSummary): GenerateSummary {
  return { ...summary, leftovers: summary.leftovers.map((l) => ({ ...l, flag: requestFieldFor(l.flag) })) };
}

const leftoverCount = (summary: GenerateSummary) => summary.leftovers.length + summary.leftovers_not_listed;

/**
 * Why a strict request's pass is refused (null: it leaves nothing of the reference), every leftover counted, the
 * first named. `rehearsed`: the full pass's leftovers found by the infra pass's rehearsal, so the run stops before its infra pass.
 */
export function strictRefusal(pass: Pass, summary: GenerateSummary, rehearsed = false): string | null {
  const count = leftoverCount(summary);
  if (count === 0) return null;
  const named = inRequestWords(summary)
    .leftovers.slice(0, MAX_IN_REFUSAL)
    .map((l) => leftoverLine(l));
  const more = count - named.length;
  const refused = rehearsed
    ? `strict: the run is refused before its infra pass is pushed, as its ${pass} pass would leave`
    : `strict: the ${pass} pass is refused before anything of it is pushed, as it leaves`;
  return (
    `${refused} ${count} identifier(s) of the reference in the new cluster's files: ` +
    named.join('; ') +
    (more > 0 ? `; and ${more} more (the run log and a preview list them)` : '') +
    '. Move each with the request field in brackets, or send strict: false to push with them listed'
  );
}

/**
 * Logs a generated pass's leftovers, each with the request field that moves it, and refuses the pass (a step
 * failure no retry changes) when the request is strict. Called before the pass is staged, so a refusal pushes nothing.
 */
export async function gateLeftovers(ctx: StepContext, pass: Pass, summary: GenerateSummary): Promise<void> {
  if (leftoverCount(summary) === 0) return;
  // An event recorded before requests had `strict` was not strict (the service records it on every request now).
  await logAndRefuse(ctx, pass, summary, requestOf(ctx).strict === true, false);
}

/**
 * The full pass's leftovers as the infra pass's rehearsal found them: a strict request is refused with them before
 * its infra pass is staged; another run's full pass lists its own when it runs (not twice in the log).
 */
export async function gateRehearsedLeftovers(ctx: StepContext, rehearsal: GenerateSummary | undefined): Promise<void> {
  if (!rehearsal || leftoverCount(rehearsal) === 0 || requestOf(ctx).strict !== true) return;
  await logAndRefuse(ctx, 'full', rehearsal, true, true);
}

async function logAndRefuse(
  ctx: StepContext,
  pass: Pass,
  summary: GenerateSummary,
  strict: boolean,
  rehearsed: boolean,
): Promise<void> {
  const level = strict ? 'error' : 'warn';
  const { leftovers } = inRequestWords(summary);
  for (const l of leftovers.slice(0, MAX_LOGGED))
    await ctx.log.line(`${pass} pass: leftover ${leftoverLine(l)}`, level);
  if (leftovers.length > MAX_LOGGED)
    await ctx.log.line(
      `${pass} pass: ${leftovers.length - MAX_LOGGED} more leftover(s); a preview lists every one`,
      level,
    );
  const refusal = strict ? strictRefusal(pass, summary, rehearsed) : null;
  if (refusal) throw new StepError(refusal, false);
}
