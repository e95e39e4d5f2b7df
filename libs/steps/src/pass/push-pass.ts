/**
 * One pass of the generator pushed: the infrastructure pass's and the full pass's shared work (clone, generate,
 * commit, push, idempotent over redeliveries). Each pass step's folder calls `pushPass` with its pass.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { PassProvenanceData, ScaffoldRequestedData } from '#libs/events';
import {
  GenerateOptions,
  GenerateResult,
  GenerateSummary,
  Pass,
  passCheckoutFolders,
  SuppliedCredentials,
} from '#libs/generator';
import type { GitWorkspace } from '#libs/git';
import { requestOf, StepContext, StepError } from '../handler/step-handler';
import { gateLeftovers } from './leftovers';
import { passOptions, passScope } from './pass-options';
import { PushRace } from './push-race';

/** The request's supplied credentials, read from the management cluster at the moment of use. */
export async function suppliedCredentials(
  ctx: StepContext,
  req: ScaffoldRequestedData,
): Promise<SuppliedCredentials | undefined> {
  if (!req.credentials_secret) return undefined;
  if (!ctx.credentials)
    throw new StepError(
      'credentials_secret needs access to the management cluster (KUBECONFIG, a service account, or EXECUTOR=kubernetes)',
      false,
    );
  return ctx.credentials.read(req.credentials_secret);
}

export type PassOutcome = {
  commit: string;
  files: number;
  sealed: number;
  unchanged: boolean;
  /** Where the reference stood when the pass generated (unknown to a retry that finds the pass pushed). */
  reference: PassProvenanceData;
};

/** The pass event's provenance fields: the reference's revision the generator read and the cluster's folder. */
export const passProvenanceOf = (summary: GenerateSummary): PassProvenanceData => ({
  gitops_path: summary.gitops_path,
  ...(summary.reference_commit ? { reference_commit: summary.reference_commit } : {}),
  ...(summary.reference_dirty ? { reference_dirty: true } : {}),
});

/**
 * Clone, generate, commit, push one pass. Idempotent: a commit of this run and pass already on the
 * branch is taken as done. A push rejected because the branch moved is rebased onto the new head and
 * pushed again; only when another writer changed the same files is the pass generated again. The
 * infra pass hands its working copy over to the full pass of the run in this process, which takes it
 * when the branch is still at its commit (instead of cloning it again).
 */
export async function pushPass(ctx: StepContext, pass: Pass, sealingCertPem?: string): Promise<PassOutcome> {
  const req = requestOf(ctx);
  // Read before anything is cloned or pushed: both passes check them, so a missing one stops the run before its first push.
  const supplied = await suppliedCredentials(ctx, req);
  const ws = await passWorkspace(ctx, req, pass);
  let handedOver = false;
  try {
    const outcome = await generateAndPush(ctx, ws, pass, sealingCertPem, supplied);
    if (pass === 'infra') {
      await ctx.workspaces.handOver(ctx.runId, ws);
      handedOver = true;
    }
    return outcome;
  } finally {
    if (!handedOver) await ws.remove();
  }
}

/** The infra pass's working copy when the full pass may take it over, else a sparse clone of the folders the pass needs. */
export async function passWorkspace(ctx: StepContext, req: ScaffoldRequestedData, pass: Pass): Promise<GitWorkspace> {
  const repo = { url: req.repo_url, branch: req.branch };
  const taken = pass === 'full' ? await ctx.workspaces.takeOver(ctx.runId, repo, ctx.signal) : null;
  if (taken) {
    await ctx.log.line(`${pass} pass works in the infra pass's working copy (${req.branch} has not moved since)`);
    return taken;
  }
  // A folder per attempt: a redelivered duplicate running at the same time never shares a working copy.
  const dir = join(ctx.settings.workDir, ctx.runId, `${pass}-${randomBytes(4).toString('hex')}`);
  return ctx.workspaces.clone(dir, repo, ctx.signal, (files) =>
    passCheckoutFolders(passScope(req, ctx.settings), files),
  );
}

async function generateAndPush(
  ctx: StepContext,
  ws: GitWorkspace,
  pass: Pass,
  sealingCertPem: string | undefined,
  supplied: SuppliedCredentials | undefined,
): Promise<PassOutcome> {
  const req = requestOf(ctx);
  const race = new PushRace(ctx, ws, pass);
  for (;;) {
    const generated = await generateUnlessPushed(
      ctx,
      ws,
      pass,
      passOptions(req, ctx.settings, ws.dir, pass, sealingCertPem, supplied),
    );
    if ('existing' in generated) return await alreadyPushed(ctx, pass, generated.existing);
    const { summary, rehearsal } = generated;
    await gateLeftovers(ctx, pass, summary, rehearsal);
    const paths = [
      summary.gitops_path,
      ...summary.overlay_paths,
      ...summary.shared_paths_copied,
      ...summary.repo_files,
    ];
    const files = await ws.stage(paths);
    const sealed = summary.objects_sealed.length;
    // Re-scaffolding an unchanged cluster: nothing to commit, nothing to push (a redelivery finds the same).
    if (files === 0) {
      const head = await ws.head();
      await ctx.log.line(
        `${pass} pass changed nothing; ${req.branch} already holds this tree at ${head}, nothing pushed`,
      );
      return { commit: head, files: 0, sealed, unchanged: true, reference: passProvenanceOf(summary) };
    }
    const commit = await ws.commitStaged(`scaffold(${req.cluster_name}): ${pass} pass`, ctx.runId, pass);
    await ctx.log.line(`${pass} pass generated ${files} changed files, ${sealed} sealed objects; committed ${commit}`);
    // What the generator noticed but did not refuse (an inherited value naming the reference cluster, a missing dependsOn).
    for (const warning of summary.warnings) await ctx.log.line(`${pass} pass: ${warning}`, 'warn');
    const landed = await race.pushUntilLanded(commit);
    if (landed.kind === 'pushed')
      return { commit: landed.commit, files, sealed, unchanged: false, reference: passProvenanceOf(summary) };
    if (landed.kind === 'already') return await alreadyPushed(ctx, pass, landed.commit);
    // Another writer changed the files this pass wrote: generate again on their tree.
    await ctx.log.line(
      `${pass} pass conflicts with a commit on ${req.branch}; generating it again on the new head`,
      'warn',
    );
    await ws.resetToRemote();
  }
}

/**
 * The pass generated, unless an earlier attempt already pushed it. Its commit is searched for while the
 * pass is generated: a fleet repository's history is long, and the answer is nearly always no. Finding
 * it (a redelivery), or failing to search, stops the generation; what it wrote goes with the working
 * copy (a copy handed over dirty is never taken over).
 */
async function generateUnlessPushed(
  ctx: StepContext,
  ws: GitWorkspace,
  pass: Pass,
  options: GenerateOptions,
): Promise<{ existing: string } | GenerateResult> {
  const stop = new AbortController();
  const search = ws.findRunCommit(ctx.runId, pass).then(
    (commit) => (commit && stop.abort(), commit),
    (e: unknown) => (stop.abort(), Promise.reject(e)),
  );
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;
  const [found, generated] = await Promise.allSettled([search, ctx.generator.generate(options, signal)]);
  const existing = settled(found);
  return existing ? { existing } : settled(generated);
}

/** A settled promise's value, or its error thrown. */
export function settled<T>(outcome: PromiseSettledResult<T>): T {
  if (outcome.status === 'rejected') throw outcome.reason;
  return outcome.value;
}

async function alreadyPushed(ctx: StepContext, pass: Pass, commit: string): Promise<PassOutcome> {
  await ctx.log.line(`${pass} pass already on ${requestOf(ctx).branch} as ${commit}; not pushing again`);
  return { commit, files: 0, sealed: 0, unchanged: false, reference: {} };
}
