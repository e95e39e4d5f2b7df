/**
 * The step handlers, by the steps of the run plans: a mapped type over a plan's steps, so a plan whose step has no
 * handler does not compile (test/run-plan/run-plan.spec.ts shows the compiler refusing one). Each step's handler
 * lives in its own folder, libs/steps/src/steps/<step>/, with its spec beside it.
 */
import { keptPlans, planStep, RUN_PLANS } from '#libs/events';
import type { RunPlan, StepNameOf } from '#libs/events';
import type { StepSettings } from './handler/settings';
import type { StepHandler } from './handler/step-handler';
import { certFetch } from './steps/cert-fetch/handler';
import { fullPass } from './steps/full-pass/handler';
import { fullMerge } from './steps/full-merge/handler';
import { fullRequest } from './steps/full-request/handler';
import { infraMerge } from './steps/infra-merge/handler';
import { infraPass } from './steps/infra-pass/handler';
import { infraRequest } from './steps/infra-request/handler';
import { sealedSecretsWait } from './steps/sealed-secrets-wait/handler';

/** A handler for every step of plan P, each for its own step. */
export type HandlersFor<P extends RunPlan> = { readonly [S in StepNameOf<P>]: StepHandler<S> };

/** The handlers of every step of the current plans (and of the kept older ones, whose steps are among them). */
export const STEP_HANDLERS = {
  'infra-pass': infraPass,
  'sealed-secrets-wait': sealedSecretsWait,
  'cert-fetch': certFetch,
  'full-pass': fullPass,
  'infra-request': infraRequest,
  'infra-merge': infraMerge,
  'full-request': fullRequest,
  'full-merge': fullMerge,
} as const satisfies HandlersFor<typeof RUN_PLANS.scaffold> & HandlersFor<(typeof RUN_PLANS)['scaffold-mr']>;

/**
 * The handler of each step of these plans, in plan order (a deployed plan's step without a handler stops the
 * process at start: a plan added at run time is not checked by the compiler).
 */
export function handlersFor(
  plans: readonly RunPlan[] = keptPlans(),
  handlers: Readonly<Record<string, StepHandler<string>>> = STEP_HANDLERS,
): StepHandler[] {
  const steps = [...new Set(plans.flatMap((p) => p.steps.map((s) => s.name)))];
  return steps.map((step) => {
    const handler = handlers[step];
    if (!handler || handler.step !== step) throw new Error(`run plan step ${step} has no handler`);
    return handler as StepHandler;
  });
}

/** The step handlers a process runs: one per step of every kept plan (as they are when this module loads). */
export const LOCAL_STEP_HANDLERS: StepHandler[] = handlersFor();

/** A step's deadline: its own (in its plan, from a setting plus a grace), else the per-step timeout. */
export function stepDeadlineMs(step: string, settings: StepSettings, plans: readonly RunPlan[] = keptPlans()): number {
  const declared = [...plans]
    .reverse()
    .map((p) => planStep(p, step)?.deadline)
    .find(Boolean);
  return declared ? settings[declared.setting] + declared.graceMs : settings.stepTimeoutMs;
}
