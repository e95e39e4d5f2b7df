/**
 * One pass delivered as a merge request: generated like a pushed pass (push-pass.ts) on the branch Flux reads,
 * committed, pushed to a branch of its own and proposed for merging into it. Idempotent over retries: a branch
 * already holding this run's commit of the pass is not pushed again, and the request from it is found, not opened
 * a second time. A branch of that name that holds no commit of the run is someone else's and is never overwritten.
 */
import type { EventDataByType, PassProvenanceData, ScaffoldRequestedData } from '#libs/events';
import type { ForgePort, ForgeRepository, MergeRequest } from '#libs/delivery/forge-port';
import { describeDryRun } from '#libs/generator/summary-text';
import type { GenerateSummary, Pass, SuppliedCredentials } from '#libs/generator';
import type { GitWorkspace } from '#libs/git';
import { crashPoint } from '../handler/crash-points';
import { requestOf, StepContext, StepError } from '../handler/step-handler';
import { gateLeftovers, inRequestWords } from './leftovers';
import { passOptions } from './pass-options';
import { passWorkspace, passProvenanceOf, suppliedCredentials } from './push-pass';
import { forgeOf, mergeBranch } from './merge-requests';

type Opened = EventDataByType['MergeRequestOpened'];
/** The pass's plan as planText read it: its summary and, for an infra pass, the full pass it rehearsed. */
type PlannedPass = { summary: GenerateSummary; rehearsal?: GenerateSummary };

/** What the pass left on its branch: the commit and its counts (a retry that finds it pushed does not know them). */
interface Committed {
  commit: string;
  files: number;
  sealed: number;
}

const PASS_TITLES = { infra: 'infrastructure pass', full: 'full pass' } as const;

/** Generates the pass, pushes it to its branch and opens (or finds) its merge request. */
export async function requestPass(
  ctx: StepContext,
  step: 'infra-request' | 'full-request',
  pass: Pass,
  sealingCertPem?: string,
): Promise<{ type: 'MergeRequestOpened'; data: Opened }> {
  const req = requestOf(ctx);
  const forge = forgeOf(ctx, req);
  const supplied = await suppliedCredentials(ctx, req);
  const head = mergeBranch(req.cluster_name, pass, ctx.runId);
  const ws = await passWorkspace(ctx, req, pass);
  try {
    const { body, reference, planned } = await planText(ctx, ws, pass, sealingCertPem, supplied);
    const committed = await pushedBefore(ctx, ws, head, pass);
    const landed = committed ?? (await commitAndPush(ctx, ws, head, pass, planned, sealingCertPem, supplied));
    if (landed === 'unchanged') {
      const commit = await ws.head();
      await ctx.log.line(
        `${pass} pass changed nothing; ${req.branch} already holds this tree at ${commit}: no merge request`,
      );
      return opened(step, pass, { commit, files: 0, sealed: 0 }, { unchanged: true, ...reference });
    }
    const request = await proposeMerge(ctx, forge, { head, pass, body, commit: landed.commit });
    return opened(step, pass, landed, {
      request: { number: request.number, url: request.url, head, base: req.branch },
      ...reference,
    });
  } finally {
    await ws.remove();
  }
}

const opened = (step: Opened['step'], pass: Pass, c: Committed, rest: Partial<Opened>) => ({
  type: 'MergeRequestOpened' as const,
  data: { step, pass, commit: c.commit, files_changed: c.files, objects_sealed: c.sealed, ...rest },
});

/**
 * The dry run of the pass on the branch Flux reads, in the words `scaffolderctl preview` prints: the request's body.
 * Sealed and encrypted values show as counts, so the text is the same whatever credentials the pass generates.
 */
async function planText(
  ctx: StepContext,
  ws: GitWorkspace,
  pass: Pass,
  sealingCertPem: string | undefined,
  supplied: SuppliedCredentials | undefined,
): Promise<{ body: string; reference: PassProvenanceData; planned: PlannedPass }> {
  const options = passOptions(requestOf(ctx), ctx.settings, ws.dir, pass, sealingCertPem, supplied);
  // An infra pass's plan rehearses the full pass too (the summary of it is `rehearsal`).
  const { summary, changes, rehearsal } = await ctx.generator.preview(options, ctx.signal);
  return {
    body: describeDryRun(inRequestWords(summary), changes),
    reference: passProvenanceOf(summary),
    planned: { summary, rehearsal },
  };
}

/**
 * This run's commit of the pass on its branch, pushed by an earlier attempt; null when the branch is not there. A
 * branch of that name without the run's commit was not made by this run: it is reported, never overwritten.
 */
async function pushedBefore(ctx: StepContext, ws: GitWorkspace, head: string, pass: Pass): Promise<Committed | null> {
  const tip = await ws.fetchBranch(head);
  if (!tip) return null;
  const ours = await ws.findRunCommit(ctx.runId, pass, { branch: head });
  if (!ours)
    throw new StepError(
      `branch ${head} exists and holds no commit of run ${ctx.runId}: not overwritten (delete it, or re-run as a new run)`,
      false,
    );
  await ctx.log.line(`${pass} pass already on ${head} as ${ours}; not pushing again`);
  if (tip !== ours) await ctx.log.line(`${head} was changed after the run pushed it: now at ${tip}`, 'warn');
  return { commit: ours, files: 0, sealed: 0 };
}

async function commitAndPush(
  ctx: StepContext,
  ws: GitWorkspace,
  head: string,
  pass: Pass,
  planned: PlannedPass,
  sealingCertPem: string | undefined,
  supplied: SuppliedCredentials | undefined,
): Promise<Committed | 'unchanged'> {
  const req = requestOf(ctx);
  // Both passes' leftovers, as planText planned them on this same tree a moment ago: the full pass is not rehearsed again.
  await gateLeftovers(ctx, pass, planned.summary, planned.rehearsal);
  const options = {
    ...passOptions(req, ctx.settings, ws.dir, pass, sealingCertPem, supplied),
    rehearseFullPass: false,
  };
  const { summary } = await ctx.generator.generate(options, ctx.signal);
  const files = await ws.stage([
    summary.gitops_path,
    ...summary.overlay_paths,
    ...summary.shared_paths_copied,
    ...summary.repo_files,
  ]);
  if (files === 0) return 'unchanged';
  const commit = await ws.commitStaged(`scaffold(${req.cluster_name}): ${pass} pass`, ctx.runId, pass);
  for (const warning of summary.warnings) await ctx.log.line(`${pass} pass: ${warning}`, 'warn');
  await ws.pushTo(head, null);
  crashPoint(`after-push:${pass}`);
  await ctx.log.line(`${pass} pass pushed ${commit} to ${head} (${files} changed files)`);
  return { commit, files, sealed: summary.objects_sealed.length };
}

/**
 * The pass's merge request: the one from its branch when a retry finds it (its text brought up to date while it
 * is open), else a new one. Auto-merge only where the request asks and the settings allow it for the repository.
 */
async function proposeMerge(
  ctx: StepContext,
  forge: { port: ForgePort; repository: ForgeRepository; autoMerge?: boolean },
  change: { head: string; pass: Pass; body: string; commit: string },
): Promise<MergeRequest> {
  const req = requestOf(ctx);
  const spec = {
    repository: forge.repository,
    head: change.head,
    base: req.branch,
    title: `scaffold(${req.cluster_name}): ${PASS_TITLES[change.pass]}`,
    body: requestBody(ctx, req, change.body),
    labels: ['gitops-scaffolder', `operation:scaffold-${change.pass}`, `cluster:${req.cluster_name}`],
    autoMerge: req.delivery?.auto_merge === true && forge.autoMerge === true,
    headSha: change.commit,
  };
  const found = await forge.port.findMergeRequest(forge.repository, change.head, req.branch);
  const request = !found
    ? await forge.port.openMergeRequest(spec)
    : found.state === 'open'
      ? await forge.port.updateMergeRequest(spec, found.number)
      : found;
  crashPoint(`after-request:${change.pass}`);
  await ctx.log.line(
    `merge request #${request.number} ${found ? 'found' : 'opened'}: ${request.url} (${request.state})`,
  );
  return request;
}

/** The plan, then the run's id and its console page. */
function requestBody(ctx: StepContext, req: ScaffoldRequestedData, plan: string): string {
  const page = ctx.settings.consoleUrl ? `${ctx.settings.consoleUrl.replace(/\/+$/, '')}/ui/#/runs/${ctx.runId}` : null;
  return (
    `${plan}\n---\n` +
    `Opened by GitOps Scaffolder for cluster ${req.cluster_name}, run ${ctx.runId}${page ? `: ${page}` : ''}.\n`
  );
}
