/**
 * The run plans this build knows: the current one of each kind, which new runs start with, and every older version
 * a run in flight may still have started with (a run finishes on the plan it started with). A deploy that changes a
 * run's shape adds a version here and keeps the old one until no run of it can be in flight.
 */
import { SCAFFOLD_MR_V1 } from './scaffold-mr-v1-plan';
import { SCAFFOLD_V1 } from './scaffold-v1-plan';
import { PlanRef, RunPlan, StepNameOf, stepNames } from './run-plan';

/** The current plan of each kind. */
export const RUN_PLANS = { scaffold: SCAFFOLD_V1, 'scaffold-mr': SCAFFOLD_MR_V1 } as const;

/** The plans kept for runs in flight (the current ones included). */
const KEPT_PLANS = [SCAFFOLD_V1, SCAFFOLD_MR_V1] as const;

/** Every step of every kept plan, as a type. */
export type Step = StepNameOf<(typeof KEPT_PLANS)[number]>;

/** Runs recorded before plans were (a ScaffoldRequested without `plan`) started with this one. */
export const FIRST_PLAN: PlanRef = { kind: 'scaffold', version: 1 };

const kept: RunPlan[] = [...KEPT_PLANS];
const current = new Map<string, RunPlan>(Object.values(RUN_PLANS).map((p) => [p.kind, p]));
let generation = 0;

/** The plan a run started with, or undefined when this build does not keep it. */
export const planOf = (ref: PlanRef): RunPlan | undefined =>
  kept.find((p) => p.kind === ref.kind && p.version === ref.version);

/** The plan new runs of a kind start with. */
export function currentPlan(kind = 'scaffold'): RunPlan {
  const plan = current.get(kind);
  if (!plan) throw new Error(`no run plan of kind ${kind}`);
  return plan;
}

/** Every kept plan, oldest first. */
export const keptPlans = (): readonly RunPlan[] => kept;

/** Every step of every kept plan, each once (the step enums of the event schemas and the APIs). */
export const allSteps = (): string[] => stepNames(kept);

/** Changes whenever the kept plans do (the schemas built from them are built again). */
export const plansGeneration = () => generation;

/**
 * Makes `plan` current for its kind, keeping every plan before it (a deploy of a new version, as the tests do it;
 * the service deploys the plans above at start).
 */
export function deployRunPlan(plan: RunPlan): void {
  if (planOf(plan)) {
    if (planOf(plan) !== plan) throw new Error(`run plan ${plan.kind} v${plan.version} is already another plan`);
  } else {
    if (kept.some((p) => p.kind === plan.kind && p.version > plan.version))
      throw new Error(`run plan ${plan.kind} v${plan.version} is older than one already deployed`);
    kept.push(plan);
  }
  current.set(plan.kind, plan);
  generation++;
}
