/**
 * What the merge-request steps share: the forge of the run's repository, the branch a pass is proposed from, and
 * the wait for a person (or the forge's auto-merge) to merge it.
 */
import type { DeliveredPass, EventDataByType, MergeRequestRef, ScaffoldRequestedData } from '#libs/events';
import type { ForgePort, ForgeRepository, MergeRequest } from '#libs/delivery/forge-port';
import { requestOf, StepContext, StepError } from '../handler/step-handler';

/** The forge that serves the run's repository, as the settings give it. */
export function forgeOf(
  ctx: StepContext,
  req: ScaffoldRequestedData,
): { port: ForgePort; repository: ForgeRepository; autoMerge?: boolean } {
  const found = ctx.forges?.forgeFor(req.repo_url, {
    forge: req.delivery?.forge as never,
    apiUrl: req.delivery?.api_url,
  });
  if (!found)
    throw new StepError(
      `merge-request delivery: no forge is configured for ${req.repo_url} (FORGE_DEFAULTS in this process's settings)`,
      false,
    );
  return found;
}

/**
 * The branch a pass is proposed from: `scaffolder/<cluster>/<operation>/<run>`, the same on every retry of the run
 * (so a retry finds what an earlier attempt pushed) and different for every run.
 */
export function mergeBranch(cluster: string, pass: DeliveredPass, runId: string): string {
  return `scaffolder/${cluster}/scaffold-${pass}/${runId.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 40)}`;
}

type Merged = { type: 'MergeRequestMerged'; data: EventDataByType['MergeRequestMerged'] };
type Closed = { type: 'MergeRequestClosed'; data: EventDataByType['MergeRequestClosed'] };

/**
 * Waits until the pass's request is merged (its result) or closed unmerged (the step's failure event: the run
 * fails, a retry cannot merge it), reading its state with a growing pause up to MERGE_POLL_MAX_MS and reporting
 * what it sees when that changes and at least every minute. Past MERGE_DEADLINE_SECONDS the step fails.
 */
export async function waitForMerge(
  ctx: StepContext,
  step: 'infra-merge' | 'full-merge',
  pass: DeliveredPass,
  reportEveryMs: number,
): Promise<Merged | Closed> {
  const req = requestOf(ctx);
  const seen = ctx.state.mergeRequests?.find((r) => r.pass === pass);
  // The branch Flux reads already held the pass: there was nothing to propose, so nothing to wait for.
  if (!seen) return merged(step, pass, (pass === 'infra' ? ctx.state.infraCommit : ctx.state.fullCommit) ?? '');
  const forge = forgeOf(ctx, req);
  const ref: MergeRequestRef = { number: seen.number, url: seen.url, head: seen.head, base: seen.base };
  const started = Date.now();
  const deadlineMs = ctx.settings.mergeDeadlineMs;
  let delay = Math.min(ctx.settings.pollInitialMs, ctx.settings.mergePollMaxMs);
  let reported = { said: '', at: -Infinity };
  for (;;) {
    const request = await forge.port.readMergeRequest(forge.repository, seen.number);
    const edited = request.headSha !== seen.commit;
    if (request.state === 'merged') return mergedRequest(ctx, step, pass, ref, request, edited);
    if (request.state === 'closed')
      return {
        type: 'MergeRequestClosed',
        data: {
          step,
          pass,
          request: ref,
          reason: `merge request #${seen.number} was closed without merging (${seen.url})`,
        },
      };
    const waitedMs = Date.now() - started;
    if (waitedMs + delay > deadlineMs)
      throw new StepError(
        `merge request #${seen.number} not merged within ${Math.round(deadlineMs / 1000)} s (${seen.url})`,
        false,
      );
    const said = `merge request #${seen.number} open${edited ? `, its branch changed after the run pushed it (now ${request.headSha.slice(0, 12)})` : ''}`;
    if (said !== reported.said || waitedMs - reported.at >= reportEveryMs) {
      await ctx.log.line(`waiting for ${seen.url} to be merged: ${said}`, edited ? 'warn' : 'info');
      await ctx.commands.handle(ctx.runId, { type: 'ReportProgress', step, waitedMs, deadlineMs, seen: said });
      reported = { said, at: waitedMs };
    }
    await pause(delay, ctx.signal);
    delay = Math.min(ctx.settings.mergePollMaxMs, delay * 2);
  }
}

async function mergedRequest(
  ctx: StepContext,
  step: Merged['data']['step'],
  pass: DeliveredPass,
  ref: MergeRequestRef,
  request: MergeRequest,
  edited: boolean,
): Promise<Merged> {
  if (!request.mergeCommitSha)
    throw new StepError(`merge request #${ref.number} is merged but the forge names no merge commit yet`, true);
  await ctx.log.line(
    `merge request #${ref.number} merged as ${request.mergeCommitSha}${edited ? ' (with changes pushed to its branch after the run)' : ''}`,
    edited ? 'warn' : 'info',
  );
  return merged(step, pass, request.mergeCommitSha, ref, edited);
}

const merged = (
  step: Merged['data']['step'],
  pass: DeliveredPass,
  commit: string,
  request?: MergeRequestRef,
  edited = false,
): Merged => ({
  type: 'MergeRequestMerged',
  data: { step, pass, merge_commit: commit, ...(request ? { request } : {}), ...(edited ? { edited } : {}) },
});

/** A pause the step's deadline (its signal) cuts short. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new StepError('step deadline passed while waiting for a merge', true));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms);
    const stop = () => (
      clearTimeout(timer),
      reject(new StepError('step deadline passed while waiting for a merge', true))
    );
    signal?.addEventListener('abort', stop, { once: true });
  });
}
