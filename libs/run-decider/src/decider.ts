/**
 * The run's rules as a pure decider: evolve folds events into state, decide turns a command and
 * the state into new events. No I/O, no clock, no ids: the caller supplies those.
 */
import type { Decider } from '#libs/event-store';
import {
  currentPlan,
  failureStepOf,
  FIRST_PLAN,
  firstStep,
  isLastStep,
  keptPlans,
  nextStep,
  planOf,
  planStep,
  resultStepOf,
  RUN_PLANS,
  triggerTable,
} from '#libs/events';
import type {
  DeliveredPass,
  EventDraft,
  MergeRequestRef,
  PassProvenanceData,
  RunPlan,
  ScaffoldRequestedData,
  Step,
  StoredEvent,
} from '#libs/events';
import { RUN_STATUSES } from './run-statuses';

export { RUN_STATUSES };

/** A run that has not ended. */
export const ACTIVE_STATUSES = ['queued', 'running', 'retrying'] as const;
export type RunStatus = 'none' | (typeof RUN_STATUSES)[number];

export interface RunState {
  status: RunStatus;
  /** The step that runs next (or ran last, once terminal). */
  step: Step | null;
  request: ScaffoldRequestedData | null;
  message: string;
  infraCommit: string | null;
  fullCommit: string | null;
  /**
   * The passes that found their tree already on the branch and pushed nothing (absent in states kept by
   * versions before it: read as none).
   */
  unchangedPasses?: Array<'infra-pass' | 'full-pass'>;
  certFingerprint: string | null;
  /** The target's sealed-secrets controller, once found Available. */
  sealedSecretsController: { namespace: string; name: string } | null;
  attempts: Partial<Record<Step, number>>;
  /** While a step is being retried: which, the attempt that failed and why. */
  retry: { step: Step; attempt: number; reason: string } | null;
  cancelRequested: boolean;
  /**
   * The plan's last step recorded its result: the run's success is all that is left (absent in states kept by
   * versions before it: read from fullCommit, the result of version 1's last step).
   */
  lastStepDone?: boolean;
  /** The merge requests the run opened (merge-request delivery), with what became of each. */
  mergeRequests?: MergeRequestSeen[];
  /**
   * Where the reference stood when the run's latest pass generated (its ownership marker records the same): absent
   * when the reference is no git working copy, and in states kept by versions before it.
   */
  reference?: { commit: string; dirty: boolean };
  /** The new cluster's folder in the repository, as its passes wrote it (absent before a pass, and in older states). */
  gitopsPath?: string;
  /** The long wait's progress, while it lasts. */
  progress: { waitedMs: number; deadlineMs: number } | null;
  createdAt: string | null;
  updatedAt: string | null;
  finishedAt: string | null;
  /** Events on the run's subject that the rules refused (they changed nothing): the newest few, for reports. */
  refused: RefusedEvent[];
}

/** A merge request of the run: which pass it carries, the commit the run pushed to its branch, and its state. */
export interface MergeRequestSeen extends MergeRequestRef {
  pass: DeliveredPass;
  commit: string;
  state: 'open' | 'merged' | 'closed';
  /** Its branch did not end at the run's commit when it was merged (a person pushed to it). */
  edited?: boolean;
}

export interface RefusedEvent {
  seq: number | null;
  type: string;
  reason: string;
}

export const initialState: RunState = {
  status: 'none',
  step: null,
  request: null,
  message: '',
  infraCommit: null,
  fullCommit: null,
  unchangedPasses: [],
  certFingerprint: null,
  sealedSecretsController: null,
  attempts: {},
  retry: null,
  cancelRequested: false,
  lastStepDone: false,
  progress: null,
  createdAt: null,
  updatedAt: null,
  finishedAt: null,
  refused: [],
};

export const MAX_ATTEMPTS_PER_STEP = 5;

/** The current scaffold plan's steps, as tables (the benchmarks and the documents read them; the rules read the run's plan). */
const SCAFFOLD = RUN_PLANS.scaffold;

/** The event each step of the current plan appends when it succeeds. */
export const STEP_RESULT = Object.fromEntries(SCAFFOLD.steps.map((s) => [s.name, s.result])) as Record<
  Step,
  EventDraft['type']
>;

/** The events that may start each step of the current plan (the state decides whether they do: a SOPS run goes from InfraPushed to the full pass). */
export const STEP_TRIGGERS = Object.fromEntries(
  Object.entries(triggerTable(SCAFFOLD)).map(([step, list]) => [step, [...new Set(list.map((t) => t.type))]]),
) as unknown as Record<Step, ReadonlyArray<EventDraft['type']>>;

/** The plan a run follows: the one its ScaffoldRequested names (runs from before plans: the first). */
export function runPlanOf(state: Pick<RunState, 'request'>): RunPlan | undefined {
  return planOf(state.request?.plan ?? FIRST_PLAN);
}

/** The events that end a step (when the run's plan has one that ends with them). */
const RESULT_EVENTS: ReadonlyArray<EventDraft['type']> = [
  'InfraPushed',
  'SealedSecretsReady',
  'CertFetched',
  'FullPushed',
  'StepCompleted',
  'MergeRequestOpened',
  'MergeRequestMerged',
];

/**
 * The step after `step` in the run's plan for the run's target, and what the run does then: `usual` when it is the
 * step version 1 of the plan goes on with (its words kept), else the next step's title.
 */
function then(state: RunState, step: string, usual: string, usualText: string): { step: Step | null; text: string } {
  const plan = runPlanOf(state)!;
  const next = nextStep(plan, step, state.request?.target.kind) as Step | null;
  if (next === usual) return { step: next, text: usualText };
  return { step: next, text: next ? `next: ${planStep(plan, next)?.title ?? next}` : 'no step left' };
}

/** Whether the run's plan's last step recorded its result (so the run succeeds). */
const lastStepDone = (s: RunState) => s.lastStepDone ?? s.fullCommit !== null;

export const isTerminal = (s: RunState) =>
  s.status === 'succeeded' || s.status === 'failed' || s.status === 'cancelled';

const short = (fingerprint: string) => fingerprint.slice(0, 16);

/** What a run that succeeded pushed, in words: a pass that found its tree already on the branch pushed nothing. */
export function pushedOutcome(unchanged: ReadonlyArray<Step>): string {
  const infra = !unchanged.includes('infra-pass');
  const full = !unchanged.includes('full-pass');
  if (infra && full) return 'both passes pushed';
  if (!infra && !full) return 'nothing pushed: the branch already held both trees';
  return infra
    ? 'infrastructure pushed; the full tree was already on the branch'
    : 'full pass pushed; the infrastructure was already on the branch';
}

/** A pass's result recorded in the state's list of passes that pushed nothing. */
const withPass = (state: RunState, pass: 'infra-pass' | 'full-pass', unchanged: boolean | undefined) => [
  ...(state.unchangedPasses ?? []).filter((p) => p !== pass),
  ...(unchanged ? [pass] : []),
];

/**
 * Why an event on the run's subject cannot be part of this run, or null when it can. The service only
 * appends what `decide` allows, so these are events from elsewhere (a client with publish rights on
 * the subject): they are refused whatever NATS permissions say, never folded into the run.
 */
export function refusal(state: RunState, event: EventDraft): string | null {
  if (event.type === 'ScaffoldRequested') {
    if (state.status !== 'none') return 'a second ScaffoldRequested on a run that was already requested';
    const plan = event.data.plan ?? FIRST_PLAN;
    return planOf(plan)
      ? null
      : `ScaffoldRequested of run plan ${plan.kind} v${plan.version}, which this build does not keep`;
  }
  if (state.status === 'none' || !state.request) return `${event.type} before the run's ScaffoldRequested`;
  if (isTerminal(state)) return `${event.type} after the run ended (${state.status})`;
  if (RESULT_EVENTS.includes(event.type)) {
    const resultOf = resultStepOf(runPlanOf(state)!, event);
    if (!resultOf)
      return `${event.type}${event.type === 'StepCompleted' ? ` for ${event.data.step}` : ''}, which ends no step of the run's plan`;
    if (state.step !== resultOf) return `${event.type} while the run is at ${state.step}`;
  }
  if (event.type === 'MergeRequestClosed' && failureStepOf(runPlanOf(state)!, event) !== state.step)
    return `MergeRequestClosed for ${event.data.step} while the run is at ${state.step}`;
  if ((event.type === 'StepFailed' || event.type === 'StepProgress') && event.data.step !== state.step)
    return `${event.type} for ${event.data.step} while the run is at ${state.step}`;
  if (event.type === 'CertFetched') {
    const target = state.request.target;
    if (target.kind === 'age_recipients') return 'CertFetched on a SOPS run, which seals nothing';
    const expected = target.kind === 'sealing_cert' ? target.fingerprint_sha256 : state.certFingerprint;
    if (expected && expected !== event.data.fingerprint_sha256)
      return `CertFetched for certificate ${short(event.data.fingerprint_sha256)}… while the run's certificate is ${short(expected)}…`;
  }
  // A success before the plan's last step recorded its result, or naming commits the run does not hold.
  if (
    event.type === 'ScaffoldSucceeded' &&
    (!lastStepDone(state) ||
      event.data.full_commit !== (state.fullCommit ?? '') ||
      event.data.infra_commit !== (state.infraCommit ?? ''))
  ) {
    return 'ScaffoldSucceeded that names commits the run did not push';
  }
  return null;
}

/** How many refused events a state keeps (the reports need the newest, not all of a flood). */
const REFUSED_KEPT = 10;

export function evolve(state: RunState, event: StoredEvent | (EventDraft & { time: string })): RunState {
  const refused = refusal(state, event);
  if (refused) {
    const entry = { seq: 'seq' in event ? event.seq : null, type: event.type, reason: refused };
    return { ...state, refused: [...(state.refused ?? []), entry].slice(-REFUSED_KEPT) };
  }
  const next = apply(state, event);
  // The result of the plan's last step: the run's success follows from the plan, whatever that result is.
  if (RESULT_EVENTS.includes(event.type) && isLastStep(runPlanOf(next)!, resultStepOf(runPlanOf(next)!, event) ?? ''))
    return { ...next, lastStepDone: true };
  return next;
}

function apply(state: RunState, event: StoredEvent | (EventDraft & { time: string })): RunState {
  // Progress belongs to the step that reported it, a retry to the step that failed; any other event ends them.
  const ongoing =
    event.type === 'StepProgress' || event.type === 'StepRedriveRequested' || event.type === 'ScaffoldCancelRequested';
  const s: RunState = {
    ...state,
    updatedAt: event.time,
    progress: event.type === 'StepProgress' ? state.progress : null,
    retry: ongoing ? (state.retry ?? null) : null,
  };
  switch (event.type) {
    case 'ScaffoldRequested':
      return {
        ...s,
        status: 'queued',
        step: firstOf(event.data),
        request: event.data,
        createdAt: event.time,
        message: `waiting for ${planStep(runPlanOf({ request: event.data })!, firstOf(event.data))!.title}`,
      };
    case 'InfraPushed': {
      // SOPS runs have no controller to wait for and no certificate to fetch: the plan skips to the full pass.
      const sops = s.request?.target.kind === 'age_recipients';
      const next = then(
        s,
        'infra-pass',
        sops ? 'full-pass' : 'sealed-secrets-wait',
        sops ? 'running the full pass' : 'waiting for sealed-secrets',
      );
      return {
        ...s,
        status: 'running',
        step: next.step,
        infraCommit: event.data.commit,
        ...referenceOf(event.data),
        unchangedPasses: withPass(s, 'infra-pass', event.data.unchanged),
        message: `infrastructure ${event.data.unchanged ? 'unchanged at' : 'pushed as'} ${event.data.commit.slice(0, 12)}; ${next.text}`,
      };
    }
    case 'SealedSecretsReady': {
      // A certificate given in the request skips the check: no controller was looked at.
      const cluster = event.data.source === 'cluster';
      const next = then(
        s,
        'sealed-secrets-wait',
        'cert-fetch',
        cluster ? 'fetching its certificate' : 'reading that certificate',
      );
      return {
        ...s,
        status: 'running',
        step: next.step,
        sealedSecretsController: event.data.controller ?? null,
        message: `${cluster ? 'sealed-secrets controller available' : 'no controller checked (the request gave the sealing certificate)'}; ${next.text}`,
      };
    }
    case 'CertFetched': {
      const next = then(s, 'cert-fetch', 'full-pass', 'running the full pass');
      return {
        ...s,
        status: 'running',
        step: next.step,
        certFingerprint: event.data.fingerprint_sha256,
        message: `certificate fetched; ${next.text}`,
      };
    }
    case 'StepCompleted': {
      const next = then(s, event.data.step, '', '');
      return {
        ...s,
        status: 'running',
        step: next.step ?? s.step,
        message: `${event.data.step}: ${event.data.summary}; ${next.text}`,
      };
    }
    case 'FullPushed': {
      // The end of the run in version 1 of the plan; a plan with a step after it goes on to that one.
      const next = then(s, 'full-pass', '', '');
      const pushed = `full tree ${event.data.unchanged ? 'unchanged at' : 'pushed as'} ${event.data.commit.slice(0, 12)}`;
      return {
        ...s,
        step: next.step ?? s.step,
        fullCommit: event.data.commit,
        ...referenceOf(event.data),
        unchangedPasses: withPass(s, 'full-pass', event.data.unchanged),
        message: next.step ? `${pushed}; ${next.text}` : pushed,
      };
    }
    case 'ScaffoldSucceeded':
      return { ...s, status: 'succeeded', finishedAt: event.time, message: pushedOutcome(s.unchangedPasses ?? []) };
    case 'StepFailed':
      return {
        ...s,
        status: event.data.will_retry ? 'retrying' : s.status === 'queued' ? 'queued' : 'running',
        retry: event.data.will_retry
          ? { step: event.data.step, attempt: event.data.attempt, reason: event.data.reason }
          : null,
        attempts: { ...s.attempts, [event.data.step]: event.data.attempt },
        message: `${event.data.step} attempt ${event.data.attempt} failed: ${event.data.reason}${event.data.will_retry ? ' (retrying)' : ''}`,
      };
    case 'ScaffoldFailed':
      return {
        ...s,
        status: 'failed',
        finishedAt: event.time,
        message: `${event.data.step} failed: ${event.data.reason}`,
      };
    case 'ScaffoldCancelRequested':
      return { ...s, cancelRequested: true, message: 'cancel requested; stopping at the next step boundary' };
    case 'ScaffoldCancelled':
      return { ...s, status: 'cancelled', finishedAt: event.time, message: 'cancelled' };
    case 'StepProgress':
      return {
        ...s,
        progress: { waitedMs: event.data.waited_ms, deadlineMs: event.data.deadline_ms },
        message: `${event.data.step}: waited ${Math.round(event.data.waited_ms / 1000)} s of ${Math.round(event.data.deadline_ms / 1000)} s; ${event.data.seen}`,
      };
    case 'StepRedriveRequested':
      return { ...s, message: `${event.data.step} re-driven by ${event.data.requested_by}` };
    case 'MergeRequestOpened':
    case 'MergeRequestMerged':
    case 'MergeRequestClosed':
      return applyMergeRequest(s, event);
  }
}

type MergeRequestEvent = Extract<EventDraft, { type: `MergeRequest${string}` }>;

/** A pass event's provenance as the state keeps it; a field the event lacks keeps the earlier pass's. */
const referenceOf = (data: PassProvenanceData): Pick<RunState, 'reference' | 'gitopsPath'> => ({
  ...(data.reference_commit
    ? { reference: { commit: data.reference_commit, dirty: data.reference_dirty === true } }
    : {}),
  ...(data.gitops_path ? { gitopsPath: data.gitops_path } : {}),
});

const passWords = { infra: 'infrastructure', full: 'full tree' } as const;
const passStep = { infra: 'infra-pass', full: 'full-pass' } as const;

/** A merge request's events: the request recorded on the run, and the pass's commit once it is on the branch Flux reads. */
function applyMergeRequest(s: RunState, event: MergeRequestEvent): RunState {
  const { pass, step } = event.data;
  const next = event.type === 'MergeRequestClosed' ? { step: s.step, text: '' } : then(s, step, '', '');
  const requests = (s.mergeRequests ?? []).filter((r) => r.pass !== pass);
  const commitField = pass === 'infra' ? 'infraCommit' : 'fullCommit';
  const base = { ...s, status: 'running' as const, step: next.step ?? s.step };
  switch (event.type) {
    case 'MergeRequestOpened': {
      const { request, commit, unchanged } = event.data;
      return {
        ...base,
        // A pass the branch already held is on it now; one in a request is once the request is merged.
        ...(unchanged ? { [commitField]: commit } : {}),
        ...referenceOf(event.data),
        unchangedPasses: withPass(s, passStep[pass], unchanged),
        mergeRequests: request ? [...requests, { ...request, pass, commit, state: 'open' }] : requests,
        message: request
          ? `${passWords[pass]} pushed to ${request.head} as ${commit.slice(0, 12)}; merge request #${request.number} opened (${request.url}); ${next.text}`
          : `${passWords[pass]} unchanged at ${commit.slice(0, 12)}: no merge request needed; ${next.text}`,
      };
    }
    case 'MergeRequestMerged': {
      const seen = s.mergeRequests?.find((r) => r.pass === pass);
      const merged = seen
        ? [{ ...seen, state: 'merged' as const, ...(event.data.edited ? { edited: true } : {}) }]
        : [];
      const said = seen
        ? `merge request #${seen.number} merged as ${event.data.merge_commit.slice(0, 12)}`
        : 'nothing to merge';
      return {
        ...base,
        [commitField]: event.data.merge_commit,
        mergeRequests: [...requests, ...merged],
        message:
          next.step && next.step !== step ? `${passWords[pass]}: ${said}; ${next.text}` : `${passWords[pass]}: ${said}`,
      };
    }
    case 'MergeRequestClosed': {
      const closed = {
        ...event.data.request,
        pass,
        commit: s.mergeRequests?.find((r) => r.pass === pass)?.commit ?? '',
      };
      return {
        ...base,
        mergeRequests: [...requests, { ...closed, state: 'closed' }],
        message: `merge request #${event.data.request.number} closed without merging: ${event.data.reason}`,
      };
    }
  }
}

export const fold = (events: ReadonlyArray<StoredEvent | (EventDraft & { time: string })>) =>
  events.reduce(evolve, initialState);

export type Command =
  | { type: 'RequestScaffold'; data: ScaffoldRequestedData }
  | { type: 'CompleteStep'; step: Step; result: EventDraft }
  | { type: 'FailStep'; step: Step; reason: string; retryable: boolean }
  /** A failure found outside the step's worker (its Job failed, vanished or could not be launched): the step the run is at fails. */
  | { type: 'FailCurrentStep'; reason: string; retryable: boolean }
  | { type: 'RequestCancel'; requestedBy: string }
  /** A worker about to start a step asks whether the run goes on. */
  | { type: 'StopIfCancelled'; step: Step }
  | { type: 'ReportProgress'; step: Step; waitedMs: number; deadlineMs: number; seen: string }
  | { type: 'Redrive'; requestedBy: string }
  /**
   * The service's stall check: a run at a step with no event for `quietMs` (its step's longest silence, so no
   * worker is on it: a lost delivery) is re-driven. `now` comes with the command: the rules read no clock.
   */
  | { type: 'RedriveStalled'; quietMs: number; now: string };

/** Who a stall check's re-drive names in its event (an operator's re-drive names the operator). */
export const STALL_CHECK = 'stall-check';

export class RunRuleViolation extends Error {
  constructor(
    readonly code: 'not_found' | 'already_finished',
    message: string,
  ) {
    super(message);
  }
}

export function decide(command: Command, state: RunState): EventDraft[] {
  switch (command.type) {
    case 'RequestScaffold':
      // The same request twice (an idempotent retry) creates nothing new.
      // The run records the plan it starts with (the current one) and finishes on it.
      return state.status === 'none'
        ? [{ type: 'ScaffoldRequested', data: { ...command.data, plan: currentRef(command.data) } }]
        : [];
    case 'CompleteStep': {
      // A late or duplicate result (redelivery after the step already advanced) is dropped.
      const plan = runPlanOf(state);
      if (isTerminal(state) || !plan || state.step !== command.step) return [];
      // The step's failure event (a merge request closed unmerged): recorded, and the run fails with its reason.
      if (failureStepOf(plan, command.result) === command.step && 'reason' in command.result.data)
        return [
          command.result,
          { type: 'ScaffoldFailed', data: { step: command.step, reason: command.result.data.reason } },
        ];
      if (resultStepOf(plan, command.result) !== command.step) return [];
      if (isLastStep(plan, command.step)) return succeeded(state, command.result);
      const events: EventDraft[] = [command.result];
      if (state.cancelRequested) {
        const next = nextStep(plan, command.step, state.request?.target.kind) as Step | null;
        events.push({ type: 'ScaffoldCancelled', data: { step: next } });
      }
      return events;
    }
    case 'FailStep': {
      if (isTerminal(state) || state.step !== command.step) return [];
      const attempt = (state.attempts[command.step] ?? 0) + 1;
      const willRetry = command.retryable && attempt < MAX_ATTEMPTS_PER_STEP && !state.cancelRequested;
      const events: EventDraft[] = [
        { type: 'StepFailed', data: { step: command.step, attempt, reason: command.reason, will_retry: willRetry } },
      ];
      if (!willRetry) {
        events.push(
          state.cancelRequested
            ? { type: 'ScaffoldCancelled', data: { step: command.step } }
            : { type: 'ScaffoldFailed', data: { step: command.step, reason: command.reason } },
        );
      }
      return events;
    }
    case 'FailCurrentStep':
      // A run that was never requested is at no step: nothing fails.
      return state.step
        ? decide({ type: 'FailStep', step: state.step, reason: command.reason, retryable: command.retryable }, state)
        : [];
    case 'RequestCancel':
      if (state.status === 'none') throw new RunRuleViolation('not_found', 'no such run');
      if (isTerminal(state)) throw new RunRuleViolation('already_finished', `run already ${state.status}`);
      return state.cancelRequested
        ? []
        : [{ type: 'ScaffoldCancelRequested', data: { requested_by: command.requestedBy } }];
    case 'StopIfCancelled':
      return state.cancelRequested && !isTerminal(state) && state.step === command.step
        ? [{ type: 'ScaffoldCancelled', data: { step: command.step } }]
        : [];
    case 'ReportProgress':
      if (isTerminal(state) || state.step !== command.step) return [];
      return [
        {
          type: 'StepProgress',
          data: {
            step: command.step,
            waited_ms: Math.round(command.waitedMs),
            deadline_ms: Math.round(command.deadlineMs),
            seen: command.seen,
          },
        },
      ];
    case 'Redrive':
      if (state.status === 'none') throw new RunRuleViolation('not_found', 'no such run');
      if (isTerminal(state) || !state.step)
        throw new RunRuleViolation('already_finished', `run already ${state.status}`);
      return [{ type: 'StepRedriveRequested', data: { step: state.step, requested_by: command.requestedBy } }];
    case 'RedriveStalled': {
      if (isTerminal(state) || !state.step || !state.updatedAt) return [];
      // Another replica's check (or an event) came first: the run is no longer quiet, nothing to do.
      const quietFor = Date.parse(command.now) - Date.parse(state.updatedAt);
      if (!(quietFor >= command.quietMs)) return [];
      return [{ type: 'StepRedriveRequested', data: { step: state.step, requested_by: STALL_CHECK } }];
    }
  }
}

/**
 * The last step of the run's plan recorded `result`: the run succeeds, naming the commits the run's state holds
 * once the result is folded in (whatever the last step is: the full pass's FullPushed, or a StepCompleted). Its
 * work is done, so a cancel requested meanwhile changes nothing. When the result landed but the process died
 * before the success, the run finishes without a second result.
 */
function succeeded(state: RunState, result: EventDraft): EventDraft[] {
  const recorded = lastStepDone(state);
  const after = recorded ? state : evolve(state, { ...result, time: state.updatedAt ?? '' });
  return [
    ...(recorded ? [] : [result]),
    { type: 'ScaffoldSucceeded', data: { infra_commit: after.infraCommit ?? '', full_commit: after.fullCommit ?? '' } },
  ];
}

/** The run's rules whole, as the event store's `handleCommand` runs them (it knows no aggregate of its own). */
export const runDecider: Decider<RunState, Command> = { initialState, evolve, decide };

/** The plan a new run records: the current one of its kind (merge-request delivery is a kind of its own). */
function currentRef(request: ScaffoldRequestedData) {
  const plan = currentPlan(request.delivery?.mode === 'merge_request' ? 'scaffold-mr' : 'scaffold');
  return { kind: plan.kind, version: plan.version };
}

/** The step a request's run starts with, in its plan. */
const firstOf = (request: ScaffoldRequestedData) => firstStep(runPlanOf({ request })!, request.target.kind) as Step;

const triggerTables = new WeakMap<RunPlan, ReturnType<typeof triggerTable>>();
const triggerTableOf = (plan: RunPlan) => {
  if (!triggerTables.has(plan)) triggerTables.set(plan, triggerTable(plan));
  return triggerTables.get(plan)!;
};

/**
 * Whether an event starts `step`: its trigger in `plan` (the run's; without one, in any kept plan, as a step's
 * consumer sees it before it reads the run), or an operator's re-drive of it.
 */
export function triggers(event: EventDraft, step: string, plan?: RunPlan): boolean {
  if (event.type === 'StepRedriveRequested') return event.data.step === step;
  const named = 'step' in event.data ? event.data.step : undefined;
  return (plan ? [plan] : keptPlans()).some((p) =>
    (triggerTableOf(p)[step] ?? []).some((t) => t.type === event.type && (t.step === undefined || t.step === named)),
  );
}
