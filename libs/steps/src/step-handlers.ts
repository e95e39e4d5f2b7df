import { join } from 'node:path';
import type { JetStreamEventStore } from '../../event-store/src';
import type { EventDraft, ScaffoldRequestedData, Step } from '../../events/src';
import { generate, GeneratorInputError, GeneratorValidationError, Pass } from '../../generator/src';
import { GitStepError, GitWorkspace } from '../../git/src';
import type { RunState } from '../../run-decider/src';
import { CertificateError, parseSealingCertificate } from '../../sealing/src';
import { RunLog } from './run-log';
import type { StepSettings } from './settings';

export const SEALING_CERT_INPUT = 'sealing-cert';

/** A step failure with the decision whether retrying can help. */
export class StepError extends Error {
  constructor(message: string, readonly retryable: boolean) {
    super(message);
  }
}

export interface StepContext {
  runId: string;
  state: RunState;
  store: JetStreamEventStore;
  settings: StepSettings;
  log: RunLog;
}

export interface StepHandler {
  step: Step;
  run(ctx: StepContext): Promise<EventDraft>;
}

function request(ctx: StepContext): ScaffoldRequestedData {
  if (!ctx.state.request) throw new StepError('run has no request', false);
  return ctx.state.request;
}

/** Errors from the generator and git become step errors with a clear reason and the right retry decision. */
export function toStepError(e: unknown): StepError {
  if (e instanceof StepError) return e;
  if (e instanceof GitStepError) return new StepError(e.message, e.retryable);
  if (e instanceof GeneratorInputError || e instanceof GeneratorValidationError || e instanceof CertificateError) return new StepError(e.message, false);
  return new StepError((e as Error)?.message ?? String(e), true);
}

/**
 * Clone, generate, commit, push one pass. Idempotent: a commit of this run and pass already on the
 * branch is taken as done. A push rejected because the branch moved is redone on the new head.
 */
async function pushPass(ctx: StepContext, pass: Pass, sealingCertPem?: string): Promise<{ commit: string; files: number; sealed: number }> {
  const req = request(ctx);
  const ws = await GitWorkspace.clone(join(ctx.settings.workDir, ctx.runId, pass), { url: req.repo_url, branch: req.branch }, ctx.settings.gitIdentity);
  try {
    for (let attempt = 1; ; attempt++) {
      const existing = await ws.findRunCommit(ctx.runId, pass);
      if (existing) {
        await ctx.log.line(`${pass} pass already on ${req.branch} as ${existing}; not pushing again`);
        return { commit: existing, files: 0, sealed: 0 };
      }
      const { summary } = generate({
        repoDir: ws.dir,
        templateDir: ctx.settings.templateDir,
        referenceEnv: ctx.settings.referenceEnv,
        clusterName: req.cluster_name,
        domain: req.domain,
        region: req.region,
        acmeEmail: req.acme_email,
        pass,
        sealingCertPem,
        registry: ctx.settings.registry,
        sourceUrl: req.repo_url,
        sourceBranch: req.branch,
      });
      const paths = [summary.gitops_path, ...summary.shared_paths_copied];
      const files = await ws.changedFiles(paths);
      const commit = await ws.commit(paths, `scaffold(${req.cluster_name}): ${pass} pass`, ctx.runId, pass);
      await ctx.log.line(`${pass} pass generated ${files} changed files, ${summary.objects_sealed.length} sealed objects; committed ${commit}`);
      try {
        await ws.push();
        await ctx.log.line(`pushed ${commit} to ${req.branch}`);
        return { commit, files, sealed: summary.objects_sealed.length };
      } catch (e) {
        if (!(e instanceof GitStepError) || !e.retryable || attempt >= ctx.settings.pushAttempts) throw e;
        await ctx.log.line(`push rejected (${e.message}); redoing the pass on the new head`, 'warn');
        await ws.resetToRemote();
      }
    }
  } finally {
    ws.remove();
  }
}

export const infraPass: StepHandler = {
  step: 'infra-pass',
  async run(ctx) {
    const { commit, files } = await pushPass(ctx, 'infra');
    return { type: 'InfraPushed', data: { commit, files_changed: files } };
  },
};

async function givenCertificate(ctx: StepContext) {
  const pem = await ctx.store.getInput(ctx.runId, SEALING_CERT_INPUT);
  if (!pem) throw new StepError('the sealing certificate given with the request is missing', false);
  return parseSealingCertificate(pem);
}

function requireGivenCertTarget(ctx: StepContext) {
  if (request(ctx).target.kind !== 'sealing_cert') {
    throw new StepError('kubeconfig_secret targets need the Kubernetes executor, which this build does not include', false);
  }
}

/** With a certificate given in the request, the controller is taken as ready once the certificate checks out. */
export const sealedSecretsWait: StepHandler = {
  step: 'sealed-secrets-wait',
  async run(ctx) {
    requireGivenCertTarget(ctx);
    await givenCertificate(ctx);
    return { type: 'SealedSecretsReady', data: { source: 'given_certificate' } };
  },
};

export const certFetch: StepHandler = {
  step: 'cert-fetch',
  async run(ctx) {
    requireGivenCertTarget(ctx);
    const cert = await givenCertificate(ctx);
    await ctx.log.line(`sealing certificate ${cert.fingerprintSha256}, valid until ${cert.notAfter.toISOString()}`);
    return { type: 'CertFetched', data: { fingerprint_sha256: cert.fingerprintSha256, not_after: cert.notAfter.toISOString() } };
  },
};

export const fullPass: StepHandler = {
  step: 'full-pass',
  async run(ctx) {
    const cert = await givenCertificate(ctx);
    const { commit, sealed } = await pushPass(ctx, 'full', cert.pem);
    return { type: 'FullPushed', data: { commit, objects_sealed: sealed } };
  },
};

export const LOCAL_STEP_HANDLERS: StepHandler[] = [infraPass, sealedSecretsWait, certFetch, fullPass];
