import { Inject, Injectable } from '@nestjs/common';
import type { ScaffoldRequestedData } from '#libs/events';
import { GeneratorInputError, GeneratorValidationError, PreviewChange, TreeGenerator } from '#libs/generator';
import type { GenerateSummary } from '#libs/generator/context';
import { GitStepError, type GitWorkspaces } from '#libs/git';
import { inRequestWords, passOptions, redact, strictRefusal } from '#libs/steps';
import { ApiError } from '../common/api-error';
import type { CallerIdentity } from '../common/api-keys';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { TREE_GENERATOR } from '../generation/generation.module';
import { GIT_WORKSPACES } from '../git/git.module';
import type { CreateRequest } from './create-request';
import { Quotas } from './quotas';
import { RequestChecks } from './request-checks';

/** The answer to a preview: the pass it ran, the generator's summary and the changes to the repository. */
export interface PreviewReport {
  pass: 'infra' | 'full';
  note?: string;
  /** Why a run of this (strict) request would be refused at this pass: the leftovers it leaves, in the summary. */
  strict_refusal?: string;
  summary: GenerateSummary;
  changes: PreviewChange[];
  /**
   * An infra-pass preview (a kubeconfig_secret target): the summary of the full pass a run makes after it, rehearsed
   * with a throwaway certificate (its credential plan, leftovers and warnings; its files are not shown as changes).
   */
  full_pass_summary?: GenerateSummary;
}

/**
 * What a run of a request would change, without a run: the repository is cloned into a scratch
 * folder and the pass's plan is compared with it (nothing is appended, pushed or kept). The full pass when
 * the request gives the certificate or age recipients; the infra pass for a kubeconfig_secret target.
 */
@Injectable()
export class ScaffoldPreview {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly quotas: Quotas,
    @Inject(TREE_GENERATOR) private readonly generator: TreeGenerator,
    @Inject(GIT_WORKSPACES) private readonly workspaces: GitWorkspaces,
    private readonly checks: RequestChecks,
  ) {}

  async preview(body: unknown, caller: CallerIdentity): Promise<PreviewReport> {
    const req = await this.checks.parseInScope(body, caller);
    const request = await this.checks.requestedData(req, caller);
    // Counted as a run is (429), and stopped at its deadline: its git and kubectl are killed with it.
    const release = this.quotas.beginPreview(caller);
    const deadline = AbortSignal.timeout(this.config.previewTimeoutMs);
    try {
      return await this.workspaces.withScratchClone({ url: req.repo_url, branch: req.branch }, deadline, (ws) =>
        this.runPass(req, request, ws.dir, deadline),
      );
    } catch (e) {
      throw this.failure(e, deadline);
    } finally {
      release();
    }
  }

  /** The pass on the clone in `repoDir`, with the request's own certificate and the supplied credentials it names. */
  private async runPass(
    req: CreateRequest,
    request: ScaffoldRequestedData,
    repoDir: string,
    deadline: AbortSignal,
  ): Promise<PreviewReport> {
    const full = req.target.kind !== 'kubeconfig_secret';
    const certPem = req.target.kind === 'sealing_cert' ? req.target.cert.pem : undefined;
    const supplied = await this.checks.checkSupplied(req.credentials_secret, req.reference_env);
    const options = passOptions(request, this.config.steps, repoDir, full ? 'full' : 'infra', certPem, supplied);
    const pass = full ? 'full' : 'infra';
    const planned = await this.generator.preview(options, deadline);
    // The preview lists every leftover whether or not the request is strict; a strict run would stop there.
    const summary = inRequestWords(planned.summary);
    const rehearsal = planned.rehearsal && inRequestWords(planned.rehearsal);
    const refusal = request.strict === false ? null : strictRefusal(pass, summary, rehearsal);
    const note = full
      ? undefined
      : "the full pass needs the cluster's sealing certificate, which a run fetches once the cluster is up; it was rehearsed with a throwaway one, and its problems would have refused this preview";
    return {
      pass,
      ...(note ? { note } : {}),
      ...(refusal ? { strict_refusal: refusal } : {}),
      summary,
      changes: planned.changes,
      ...(rehearsal ? { full_pass_summary: rehearsal } : {}),
    };
  }

  /** A failed preview as the caller should see it: 504 past its deadline, 422 for what the request or its repository got wrong. */
  private failure(e: unknown, deadline: AbortSignal): unknown {
    if (deadline.aborted)
      return new ApiError(
        504,
        'preview_timeout',
        `the preview did not finish within PREVIEW_TIMEOUT_SECONDS (${this.config.previewTimeoutMs / 1000} s) and was stopped`,
      );
    if (e instanceof GeneratorInputError || e instanceof GeneratorValidationError || e instanceof GitStepError)
      return new ApiError(422, 'preview_failed', redact(this.workspaces.withoutLocalPaths(e.message)));
    return e;
  }
}
