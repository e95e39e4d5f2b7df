/**
 * A run plan: the shape of one kind of run as data (its steps in order, what starts and ends each, which runs skip
 * one, its deadline and progress settings, what a runner may report for it, its durable consumer and its words).
 * The decider's tables, the handler registry, the durable consumers and the NATS permissions, the stall check's
 * timing, the runner API's reports and the step enums of both API documents all follow from the plans
 * (docs/architecture.md, "a step").
 */
import type { EventType } from './event-types';

/** The kinds of target a request names (ScaffoldRequested's target.kind): a step may be skipped for some. */
export type TargetKind = 'sealing_cert' | 'kubeconfig_secret' | 'age_recipients';

/** Which plan a run started with: recorded in its ScaffoldRequested (events from before plans: version 1). */
export interface PlanRef {
  kind: string;
  version: number;
}

/** A step setting (StepSettings) that holds a step's own deadline in milliseconds. */
export type DeadlineSetting = 'sealedSecretsDeadlineMs' | 'mergeDeadlineMs';
/** An environment variable that holds a step's longest pause between two polls, in milliseconds. */
export type PollSetting = 'SEALED_SECRETS_POLL_MAX_MS' | 'MERGE_POLL_MAX_MS';

export interface PlanStep<Name extends string = string> {
  name: Name;
  /** What the step does, in words (the run's messages and the documents). */
  title: string;
  /** The event the step appends when it succeeds (StepCompleted names its step in its data). */
  result: EventType;
  /**
   * An event the step may append instead of its result that ends the run as failed, with the reason its data gives
   * (a merge request closed by a person: retrying cannot merge it).
   */
  failsWith?: EventType;
  /** Runs whose target is of one of these kinds skip the step (the SOPS backend has no controller and no certificate). */
  skippedFor?: readonly TargetKind[];
  /** A step with a deadline of its own (a setting plus a grace); others have the per-step timeout. */
  deadline?: { setting: DeadlineSetting; graceMs: number };
  /**
   * A long step's progress: a StepProgress when what it sees changes, and at least every `reportEveryMs`, checked
   * after each poll (at most `pollSetting` apart), appended within `slackMs`. The stall check waits that long.
   */
  progress?: { reportEveryMs: number; pollSetting: PollSetting; slackMs: number };
  /** What a runner Job may report for the step besides its result, a failure and StopIfCancelled. */
  runner: { progress: boolean; writesInputs: readonly string[] };
}

export interface RunPlan<Kind extends string = string, Name extends string = string> {
  kind: Kind;
  version: number;
  /** The event that starts a run of the plan (and so its first step). */
  start: EventType;
  steps: ReadonlyArray<PlanStep<Name>>;
}

/** The names of a plan's steps, as a type (a mapped type over it gives each step its handler). */
export type StepNameOf<P> = P extends RunPlan<string, infer Name> ? Name : never;

/** A plan, checked: step names unique, at least one step, the last one never skipped. */
export function defineRunPlan<const Kind extends string, const Name extends string>(
  plan: RunPlan<Kind, Name>,
): RunPlan<Kind, Name> {
  const names = plan.steps.map((s) => s.name);
  if (names.length === 0) throw new Error(`run plan ${plan.kind} v${plan.version} has no step`);
  if (new Set(names).size !== names.length) throw new Error(`run plan ${plan.kind} v${plan.version} repeats a step`);
  if (plan.steps.at(-1)!.skippedFor?.length)
    throw new Error(`run plan ${plan.kind} v${plan.version}: its last step may not be skipped`);
  return Object.freeze({ ...plan, steps: Object.freeze(plan.steps.map((s) => Object.freeze({ ...s }))) });
}

/** The durable consumer a step's processor pulls from in the service (shared by every replica). */
export const durableNameFor = (step: string) => `step-${step}`;

export const planStep = (plan: RunPlan, step: string): PlanStep | undefined => plan.steps.find((s) => s.name === step);

/** The first step of the plan at or after `index` that a run with this target does not skip (null: none left). */
function firstRun(plan: RunPlan, index: number, target: TargetKind | undefined): string | null {
  for (let i = index; i < plan.steps.length; i++)
    if (!target || !plan.steps[i].skippedFor?.includes(target)) return plan.steps[i].name;
  return null;
}

/** The step a run of this target starts with. */
export const firstStep = (plan: RunPlan, target: TargetKind | undefined): string => firstRun(plan, 0, target)!;

/** The step after `step` for a run with this target (its branches skipped), or null after the last. */
export function nextStep(plan: RunPlan, step: string, target: TargetKind | undefined): string | null {
  const i = plan.steps.findIndex((s) => s.name === step);
  return i < 0 ? null : firstRun(plan, i + 1, target);
}

/** Whether `step` is the plan's last (its result ends the run). */
export const isLastStep = (plan: RunPlan, step: string) => plan.steps.at(-1)?.name === step;

/** Every target kind, so the branches a plan declares can be walked. */
const TARGET_KINDS: readonly TargetKind[] = ['sealing_cert', 'kubeconfig_secret', 'age_recipients'];

/**
 * What may start each step: the plan's start event for the first step a run can begin with, else the result of
 * any step a run can come from (a skipped step's predecessor too). A trigger whose result names its step names it.
 */
export function triggerTable(plan: RunPlan): Record<string, Array<{ type: EventType; step?: string }>> {
  const table: Record<string, Array<{ type: EventType; step?: string }>> = Object.fromEntries(
    plan.steps.map((s) => [s.name, []]),
  );
  const add = (step: string, trigger: { type: EventType; step?: string }) => {
    const list = table[step];
    if (!list.some((t) => t.type === trigger.type && t.step === trigger.step)) list.push(trigger);
  };
  for (const kind of TARGET_KINDS) add(firstStep(plan, kind), { type: plan.start });
  for (const from of plan.steps)
    for (const kind of TARGET_KINDS) {
      if (from.skippedFor?.includes(kind)) continue;
      const next = nextStep(plan, from.name, kind);
      if (next)
        add(next, resultNamesStep(plan, from.result) ? { type: from.result, step: from.name } : { type: from.result });
    }
  return table;
}

/**
 * Whether a step's result names its step in its data: StepCompleted always, and any result two steps of the plan
 * share (both merge waits end with MergeRequestMerged), so an event ends only the step it names.
 */
export function resultNamesStep(plan: RunPlan, result: EventType): boolean {
  return result === 'StepCompleted' || plan.steps.filter((s) => s.result === result).length > 1;
}

/** The step an event's data names (`data.step`), if any. */
const namedStep = (event: { data?: unknown }) => (event.data as { step?: unknown } | undefined)?.step;

/** The step whose result an event is in this plan (a result that names its step: the step its data names), or null. */
export function resultStepOf(plan: RunPlan, event: { type: string; data?: unknown }): string | null {
  const step = plan.steps.find(
    (s) => s.result === event.type && (!resultNamesStep(plan, s.result) || s.name === namedStep(event)),
  );
  return step?.name ?? null;
}

/** The step whose failure event (`failsWith`) this is in the plan, or null. */
export function failureStepOf(plan: RunPlan, event: { type: string; data?: unknown }): string | null {
  return plan.steps.find((s) => s.failsWith === event.type && s.name === namedStep(event))?.name ?? null;
}

/** Every step of these plans, each once, in the order they first appear. */
export const stepNames = (plans: readonly RunPlan[]): string[] => [
  ...new Set(plans.flatMap((p) => p.steps.map((s) => s.name))),
];
