import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { RunInputs } from '#libs/event-store';
import { planStep, RUN_PLANS } from '#libs/events';
import type { EventDraft, ScaffoldRequestedData, Step } from '#libs/events';
import {
  GenerateOptions,
  GenerateResult,
  GeneratorInputError,
  GeneratorValidationError,
  Pass,
  passCheckoutFolders,
  SuppliedCredentials,
  TreeGenerator,
} from '#libs/generator';
import { fluxUrlOf, GitStepError, GitWorkspace, GitWorkspaces, originUrl, sameRepository } from '#libs/git';
import type { RunCommandPort, RunState } from '#libs/run-decider';
import { CertificateError, parseSealingCertificate } from '#libs/sealing';
import { crashPoint } from './crash-points';
import { isClassifiedError, KubeconfigRef, SuppliedCredentialsSource, TargetClusters } from './ports';
import { RunLog } from './run-log';
import type { StepSettings } from './settings';

export const SEALING_CERT_INPUT = 'sealing-cert';

/** A step failure with the decision whether retrying can help. */
export class StepError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export interface StepContext {
  runId: string;
  state: RunState;
  /** The run's commands: what a step records on the run besides its result (its progress). */
  commands: RunCommandPort;
  inputs: RunInputs;
  settings: StepSettings;
  log: RunLog;
  /** Where passes are generated (a worker pool in the service, off the API's event loop). */
  generator: TreeGenerator;
  /** Where passes get their working copies (with the process's git credentials and repository cache). */
  workspaces: GitWorkspaces;
  /** Present where the process can reach Kubernetes (the Job runner, or a service configured for it). */
  targets?: TargetClusters;
  /** Present where the process can read the management cluster's Secrets (the Job runner). */
  credentials?: SuppliedCredentialsSource;
  /** Aborted when the step passes its deadline: what the step started (git, a pass and its kustomize) is stopped with it. */
  signal?: AbortSignal;
}

/** What a step does; its deadline, progress cadence and durable come from its declaration in the run plan. */
export interface StepHandler<S extends string = Step> {
  step: S;
  run(ctx: StepContext): Promise<EventDraft>;
}

function request(ctx: StepContext): ScaffoldRequestedData {
  if (!ctx.state.request) throw new StepError('run has no request', false);
  return ctx.state.request;
}

/** Errors from the generator and git become step errors with a clear reason and the right retry decision. */
export function toStepError(e: unknown): StepError {
  if (e instanceof StepError) return e;
  if (isClassifiedError(e)) return new StepError(e.message, e.retryable);
  if (e instanceof GeneratorInputError || e instanceof GeneratorValidationError || e instanceof CertificateError)
    return new StepError(e.message, false);
  return new StepError((e as Error)?.message ?? String(e), true);
}

/** The request's supplied credentials, read from the management cluster at the moment of use. */
async function suppliedCredentials(
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

type PassOutcome = { commit: string; files: number; sealed: number; unchanged: boolean };

/**
 * Clone, generate, commit, push one pass. Idempotent: a commit of this run and pass already on the
 * branch is taken as done. A push rejected because the branch moved is rebased onto the new head and
 * pushed again; only when another writer changed the same files is the pass generated again. The
 * infra pass hands its working copy over to the full pass of the run in this process, which takes it
 * when the branch is still at its commit (instead of cloning it again).
 */
async function pushPass(ctx: StepContext, pass: Pass, sealingCertPem?: string): Promise<PassOutcome> {
  const req = request(ctx);
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
async function passWorkspace(ctx: StepContext, req: ScaffoldRequestedData, pass: Pass): Promise<GitWorkspace> {
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
  const req = request(ctx);
  const race = new PushRace(ctx, ws, pass);
  for (;;) {
    const generated = await generateUnlessPushed(
      ctx,
      ws,
      pass,
      passOptions(req, ctx.settings, ws.dir, pass, sealingCertPem, supplied),
    );
    if ('existing' in generated) return await alreadyPushed(ctx, pass, generated.existing);
    const { summary } = generated;
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
      return { commit: head, files: 0, sealed, unchanged: true };
    }
    const commit = await ws.commitStaged(`scaffold(${req.cluster_name}): ${pass} pass`, ctx.runId, pass);
    await ctx.log.line(`${pass} pass generated ${files} changed files, ${sealed} sealed objects; committed ${commit}`);
    // What the generator noticed but did not refuse (an inherited value naming the reference cluster, a missing dependsOn).
    for (const warning of summary.warnings) await ctx.log.line(`${pass} pass: ${warning}`, 'warn');
    const landed = await race.pushUntilLanded(commit);
    if (landed.kind === 'pushed') return { commit: landed.commit, files, sealed, unchanged: false };
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
function settled<T>(outcome: PromiseSettledResult<T>): T {
  if (outcome.status === 'rejected') throw outcome.reason;
  return outcome.value;
}

async function alreadyPushed(ctx: StepContext, pass: Pass, commit: string): Promise<PassOutcome> {
  await ctx.log.line(`${pass} pass already on ${request(ctx).branch} as ${commit}; not pushing again`);
  return { commit, files: 0, sealed: 0, unchanged: false };
}

/**
 * One pass's pushes into a branch other runs push to at the same time (many clusters scaffolded into
 * one fleet repository is the normal case). The remote decides who lands first; the others fetch,
 * rebase their commit on the new head (their folders are their own, so nothing is generated again)
 * and push again after a jittered, growing pause, until PUSH_DEADLINE_SECONDS after the clone.
 */
class PushRace {
  private readonly deadline: number;
  private attempts = 0;

  constructor(
    private readonly ctx: StepContext,
    private readonly ws: GitWorkspace,
    private readonly pass: Pass,
  ) {
    this.deadline = Date.now() + ctx.settings.pushDeadlineMs;
  }

  /** Pushes `commit` (the working copy's head), rebased onto the branch's new head as often as the race needs. */
  async pushUntilLanded(
    commit: string,
  ): Promise<{ kind: 'pushed' | 'already'; commit: string } | { kind: 'conflict' }> {
    for (;;) {
      this.attempts++;
      try {
        await this.ws.push();
        crashPoint(`after-push:${this.pass}`);
        await this.ctx.log.line(`pushed ${commit} to ${this.ws.repo.branch}`);
        return { kind: 'pushed', commit };
      } catch (e) {
        if (!this.mayTryAgain(e)) throw e;
        await this.pause(e as Error);
      }
      await this.ws.fetch();
      // A duplicate delivery of this step may be the writer that moved the branch.
      const theirs = await this.ws.findRunCommit(this.ctx.runId, this.pass, 'remote');
      if (theirs) return { kind: 'already', commit: theirs };
      if (!(await this.ws.rebaseOnRemote())) return { kind: 'conflict' };
      commit = await this.ws.head();
    }
  }

  /** Only a push rejected because the branch moved is this race's to retry; anything else is the step's. */
  private mayTryAgain(e: unknown): boolean {
    const rejected = e instanceof GitStepError && e.message.startsWith('push rejected');
    return rejected && this.attempts < this.ctx.settings.pushAttempts && Date.now() < this.deadline;
  }

  private async pause(e: Error): Promise<void> {
    // Full jitter: racers spread out instead of colliding again in step.
    const pauseMs = Math.min(
      this.deadline - Date.now(),
      Math.random() * Math.min(2000, 50 * 2 ** Math.min(this.attempts, 10)),
    );
    await this.ctx.log.line(
      `push rejected (${e.message}); rebasing onto the new head and pushing again in ${Math.round(pauseMs)} ms (attempt ${this.attempts + 1})`,
      'warn',
    );
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

export const infraPass: StepHandler<'infra-pass'> = {
  step: 'infra-pass',
  async run(ctx) {
    const { commit, files, unchanged } = await pushPass(ctx, 'infra');
    return { type: 'InfraPushed', data: { commit, files_changed: files, ...(unchanged ? { unchanged } : {}) } };
  },
};

/**
 * The certificate the full pass seals for: the stored PEM, accepted only when it is the one the run's
 * events name (the request's, or the CertFetched the rules accepted), so a PEM written into the inputs
 * stream by anyone else never receives the cluster's secrets.
 */
async function storedCertificate(ctx: StepContext) {
  const pem = await ctx.inputs.get(ctx.runId, SEALING_CERT_INPUT);
  if (!pem) throw new StepError('the sealing certificate of this run is missing', false);
  const cert = parseSealingCertificate(pem);
  const target = request(ctx).target;
  const expected = target.kind === 'sealing_cert' ? target.fingerprint_sha256 : ctx.state.certFingerprint;
  if (cert.fingerprintSha256 !== expected) {
    throw new StepError(
      `the stored sealing certificate (${cert.fingerprintSha256.slice(0, 16)}…) is not the one this run's events name (${(expected ?? 'none').slice(0, 16)}…); refusing to seal for it`,
      false,
    );
  }
  return cert;
}

/** The target's kubeconfig Secret and the reach into the cluster, or a clear reason why there is none. */
function clusterTarget(ctx: StepContext): { ref: KubeconfigRef; targets: TargetClusters } | null {
  const target = request(ctx).target;
  if (target.kind !== 'kubeconfig_secret') return null;
  if (!ctx.targets)
    throw new StepError(
      'kubeconfig_secret targets need access to the management cluster (KUBECONFIG, a service account, or EXECUTOR=kubernetes)',
      false,
    );
  return { ref: { namespace: target.namespace, name: target.name, key: target.key }, targets: ctx.targets };
}

/** How often the wait reports what it sees when nothing changes (its plan's progress settings). */
const WAIT_PROGRESS = planStep(RUN_PLANS.scaffold, 'sealed-secrets-wait')!.progress!;

/**
 * Waits until the target's sealed-secrets controller is Available. With a certificate given in the
 * request there is nothing to wait for once the certificate checks out.
 */
export const sealedSecretsWait: StepHandler<'sealed-secrets-wait'> = {
  step: 'sealed-secrets-wait',
  async run(ctx) {
    const cluster = clusterTarget(ctx);
    if (!cluster) {
      await storedCertificate(ctx);
      return { type: 'SealedSecretsReady', data: { source: 'given_certificate', controller: null } };
    }
    let lastSeen = '';
    let lastReport = -Infinity;
    const deadlineMs = ctx.settings.sealedSecretsDeadlineMs;
    const controller = await cluster.targets.waitForSealedSecrets(cluster.ref, async (seen, waitedMs) => {
      if (seen === lastSeen && waitedMs - lastReport < WAIT_PROGRESS.reportEveryMs) return;
      await ctx.log.line(
        `waiting for sealed-secrets (${Math.round(waitedMs / 1000)} s of ${Math.round(deadlineMs / 1000)} s): ${seen}`,
      );
      await ctx.commands.handle(ctx.runId, {
        type: 'ReportProgress',
        step: 'sealed-secrets-wait',
        waitedMs,
        deadlineMs,
        seen,
      });
      lastSeen = seen;
      lastReport = waitedMs;
    });
    await ctx.log.line(`sealed-secrets controller ${controller.namespace}/${controller.name} is Available`);
    return { type: 'SealedSecretsReady', data: { source: 'cluster', controller } };
  },
};

/** The certificate: from the target through the service proxy, or the one given in the request; checked either way. */
export const certFetch: StepHandler<'cert-fetch'> = {
  step: 'cert-fetch',
  async run(ctx) {
    const cluster = clusterTarget(ctx);
    let cert;
    if (cluster) {
      const controller = ctx.state.sealedSecretsController;
      if (!controller) throw new StepError('no sealed-secrets controller recorded for this run', false);
      const pem = await cluster.targets.fetchCertificate(cluster.ref, controller);
      // The fetched certificate itself becomes the run's (its fingerprint goes into CertFetched); kept for the full pass.
      cert = parseSealingCertificate(pem);
      await ctx.inputs.put(ctx.runId, SEALING_CERT_INPUT, pem);
    } else {
      cert = await storedCertificate(ctx);
    }
    await ctx.log.line(`sealing certificate ${cert.fingerprintSha256}, valid until ${cert.notAfter.toISOString()}`);
    return {
      type: 'CertFetched',
      data: { fingerprint_sha256: cert.fingerprintSha256, not_after: cert.notAfter.toISOString() },
    };
  },
};

/** The generator's options for one pass of a request, in a working copy: shared by the steps and the preview. */
export function passOptions(
  req: ScaffoldRequestedData,
  settings: StepSettings,
  repoDir: string,
  pass: Pass,
  sealingCertPem?: string,
  suppliedCredentials?: SuppliedCredentials,
): GenerateOptions {
  return {
    ...passScope(req, settings),
    suppliedCredentials,
    repoDir,
    repoLimits: settings.repoLimits,
    kubectl: settings.kubectl,
    domain: req.domain,
    region: req.region,
    acmeEmail: req.acme_email,
    owner: folderOwner(req),
    pass,
    sealingCertPem,
    ...secretsBackendOf(req),
    clusterVars: req.cluster_vars,
    hostMap: req.host_map,
    referenceDomain: req.reference_domain,
    registry: settings.registry,
    sourceUrl: fluxSourceUrl(req, settings),
    sourceBranch: req.branch,
  };
}

/** What decides the folders of the target repository a pass of the request reads and writes (passOptions' own values). */
const passScope = (req: ScaffoldRequestedData, settings: StepSettings) => ({
  templateDir: settings.templateDir,
  referenceEnv: req.reference_env ?? settings.referenceEnv,
  clusterName: req.cluster_name,
  pathMap: req.path_map,
});

/** The key that owns the run's cluster folder: requested_by, unless the service recorded the owner an admin acts for. */
export const folderOwner = (req: Pick<ScaffoldRequestedData, 'requested_by' | 'cluster_owner'>) =>
  req.cluster_owner ?? req.requested_by;

/**
 * Where the new cluster's Flux fetches from: the request's flux_url; the reference's own URL (as Flux
 * already knows it) when the target is the reference's repository; else the target repository.
 */
function fluxSourceUrl(
  req: Pick<ScaffoldRequestedData, 'repo_url' | 'flux_url'>,
  settings: StepSettings,
): string | undefined {
  if (req.flux_url) return req.flux_url;
  const reference = settings.templateDir ? originUrl(settings.templateDir) : undefined;
  return reference && sameRepository(reference, req.repo_url) ? undefined : fluxUrlOf(req.repo_url);
}

/** SOPS runs encrypt for the request's age recipients; every other run seals for the cluster's certificate. */
function secretsBackendOf(req: Pick<ScaffoldRequestedData, 'target'>): {
  secretsBackend: 'sealed-secrets' | 'sops';
  ageRecipients?: string[];
} {
  return req.target.kind === 'age_recipients'
    ? { secretsBackend: 'sops', ageRecipients: req.target.recipients }
    : { secretsBackend: 'sealed-secrets' };
}

export const fullPass: StepHandler<'full-pass'> = {
  step: 'full-pass',
  async run(ctx) {
    const sops = request(ctx).target.kind === 'age_recipients';
    const certPem = sops ? undefined : (await storedCertificate(ctx)).pem;
    const { commit, sealed, unchanged } = await pushPass(ctx, 'full', certPem);
    return { type: 'FullPushed', data: { commit, objects_sealed: sealed, ...(unchanged ? { unchanged } : {}) } };
  },
};
