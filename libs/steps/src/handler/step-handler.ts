/**
 * What a step handler is and what it is given: the contract every step folder (libs/steps/src/steps/<step>/)
 * implements. This folder imports nothing of the steps' own; the shared pass code and the step folders import it.
 */
import type { ForgeResolver } from '#libs/delivery/forge-port';
import type { RunInputs } from '#libs/event-store';
import type { EventDraft, ScaffoldRequestedData, Step } from '#libs/events';
import { GeneratorInputError, GeneratorValidationError, TreeGenerator } from '#libs/generator';
import type { GitWorkspaces } from '#libs/git';
import type { RunCommandPort, RunState } from '#libs/run-decider';
import { CertificateError } from '#libs/sealing';
import { isClassifiedError, SuppliedCredentialsSource, TargetClusters } from './ports';
import { RunLog } from './run-log';
import type { StepSettings } from './settings';

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
  /** Present where the settings name forges (FORGE_DEFAULTS): merge-request delivery's adapters. */
  forges?: ForgeResolver;
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

/** The run's request, which every step works from. */
export function requestOf(ctx: StepContext): ScaffoldRequestedData {
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
