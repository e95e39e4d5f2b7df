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

/** A summary's leftovers as a refusal names them: every one counted, the first few named in request words. */
function namedLeftovers(summary: GenerateSummary): string {
  const count = leftoverCount(summary);
  const named = inRequestWords(summary)
    .leftovers.slice(0, MAX_IN_REFUSAL)
    .map((l) => leftoverLine(l));
  const more = count - named.length;
  return (
    `${count} identifier(s) of the reference in the new cluster's files: ` +
    named.join('; ') +
    (more > 0 ? `; and ${more} more (the run log and a preview list them)` : '')
  );
}

/**
 * Why a strict request's pass is refused (null: it leaves nothing of the reference), with the leftovers of the full
 * pass its rehearsal found (an infra pass's `rehearsal`), so one refusal names both passes' before the infra push.
 */
export function strictRefusal(pass: Pass, summary: GenerateSummary, rehearsal?: GenerateSummary): string | null {
  const own = leftoverCount(summary) > 0;
  const full = rehearsal !== undefined && leftoverCount(rehearsal) > 0;
  if (!own && !full) return null;
  const parts = [
    ...(own
      ? [`the ${pass} pass is refused before anything of it is pushed, as it leaves ${namedLeftovers(summary)}`]
      : []),
    ...(full
      ? [
          own
            ? `its full pass would also leave ${namedLeftovers(rehearsal)}`
            : `the run is refused before its infra pass is pushed, as its full pass would leave ${namedLeftovers(rehearsal)}`,
        ]
      : []),
  ];
  return `strict: ${parts.join('; ')}. Move each with the request field in brackets, or send strict: false to push with them listed`;
}

/**
 * Logs a generated pass's leftovers, each with the request field that moves it, and refuses the pass (a step failure
 * no retry changes) when the request is strict. An infra pass's `rehearsal` (the full pass it planned) refuses a
 * strict request with its own leftovers too; another run's full pass lists its own when it runs (not twice in the
 * log). Called before the pass is staged, so a refusal pushes nothing.
 */
export async function gateLeftovers(
  ctx: StepContext,
  pass: Pass,
  summary: GenerateSummary,
  rehearsal?: GenerateSummary,
): Promise<void> {
  // An event recorded before requests had `strict` was not strict (the service records it on every request now).
  const strict = requestOf(ctx).strict === true;
  await logLeftovers(ctx, pass, summary, strict);
  if (!strict) return;
  if (rehearsal) await logLeftovers(ctx, 'full', rehearsal, strict);
  const refusal = strictRefusal(pass, summary, rehearsal);
  if (refusal) throw new StepError(refusal, false);
}

async function logLeftovers(ctx: StepContext, pass: Pass, summary: GenerateSummary, strict: boolean): Promise<void> {
  const level = strict ? 'error' : 'warn';
  const { leftovers } = inRequestWords(summary);
  for (const l of leftovers.slice(0, MAX_LOGGED))
    await ctx.log.line(`${pass} pass: leftover ${leftoverLine(l)}`, level);
  if (leftovers.length > MAX_LOGGED)
    await ctx.log.line(
      `${pass} pass: ${leftovers.length - MAX_LOGGED} more leftover(s); a preview lists every one`,
      level,
    );
}
