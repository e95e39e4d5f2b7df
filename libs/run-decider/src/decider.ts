/**
 * The run's rules as a pure decider: evolve folds events into state, decide turns a command and
 * the state into new events. No I/O, no clock, no ids: the caller supplies those.
 */
import type { Decider } from '../../event-store/src';
import type { EventDraft, ScaffoldRequestedData, Step, StoredEvent } from '../../events/src';
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
  /** The long wait's progress, while it lasts. */
  progress: { waitedMs: number; deadlineMs: number } | null;
  createdAt: string | null;
  updatedAt: string | null;
  finishedAt: string | null;
  /** Events on the run's subject that the rules refused (they changed nothing): the newest few, for reports. */
  refused: RefusedEvent[];
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
  progress: null,
  createdAt: null,
  updatedAt: null,
  finishedAt: null,
  refused: [],
};

export const MAX_ATTEMPTS_PER_STEP = 5;

const NEXT_STEP: Record<Step, Step | null> = {
  'infra-pass': 'sealed-secrets-wait',
  'sealed-secrets-wait': 'cert-fetch',
  'cert-fetch': 'full-pass',
  'full-pass': null,
};

/** The event each step appends when it succeeds. */
export const STEP_RESULT = {
  'infra-pass': 'InfraPushed',
  'sealed-secrets-wait': 'SealedSecretsReady',
  'cert-fetch': 'CertFetched',
  'full-pass': 'FullPushed',
} as const satisfies Record<Step, EventDraft['type']>;

/** The events that may start each step (the state decides whether they do: a SOPS run goes from InfraPushed to the full pass). */
export const STEP_TRIGGERS: Record<Step, ReadonlyArray<EventDraft['type']>> = {
  'infra-pass': ['ScaffoldRequested'],
  'sealed-secrets-wait': ['InfraPushed'],
  'cert-fetch': ['SealedSecretsReady'],
  'full-pass': ['CertFetched', 'InfraPushed'],
};

export const isTerminal = (s: RunState) =>
  s.status === 'succeeded' || s.status === 'failed' || s.status === 'cancelled';

/** The step whose result each result event is. */
const RESULT_STEP = Object.fromEntries(Object.entries(STEP_RESULT).map(([step, type]) => [type, step])) as Partial<
  Record<EventDraft['type'], Step>
>;
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
  if (event.type === 'ScaffoldRequested')
    return state.status === 'none' ? null : 'a second ScaffoldRequested on a run that was already requested';
  if (state.status === 'none' || !state.request) return `${event.type} before the run's ScaffoldRequested`;
  if (isTerminal(state)) return `${event.type} after the run ended (${state.status})`;
  const resultOf = RESULT_STEP[event.type];
  if (resultOf && state.step !== resultOf) return `${event.type} while the run is at ${state.step}`;
  if ((event.type === 'StepFailed' || event.type === 'StepProgress') && event.data.step !== state.step)
    return `${event.type} for ${event.data.step} while the run is at ${state.step}`;
  if (event.type === 'CertFetched') {
    const target = state.request.target;
    if (target.kind === 'age_recipients') return 'CertFetched on a SOPS run, which seals nothing';
    const expected = target.kind === 'sealing_cert' ? target.fingerprint_sha256 : state.certFingerprint;
    if (expected && expected !== event.data.fingerprint_sha256)
      return `CertFetched for certificate ${short(event.data.fingerprint_sha256)}… while the run's certificate is ${short(expected)}…`;
  }
  if (
    event.type === 'ScaffoldSucceeded' &&
    (!state.fullCommit ||
      event.data.full_commit !== state.fullCommit ||
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
  return apply(state, event);
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
        step: 'infra-pass',
        request: event.data,
        createdAt: event.time,
        message: 'waiting for the infrastructure pass',
      };
    case 'InfraPushed': {
      // SOPS runs have no controller to wait for and no certificate to fetch: the full pass is next.
      const sops = s.request?.target.kind === 'age_recipients';
      return {
        ...s,
        status: 'running',
        step: sops ? 'full-pass' : NEXT_STEP['infra-pass'],
        infraCommit: event.data.commit,
        unchangedPasses: withPass(s, 'infra-pass', event.data.unchanged),
        message: `infrastructure ${event.data.unchanged ? 'unchanged at' : 'pushed as'} ${event.data.commit.slice(0, 12)}; ${sops ? 'running the full pass' : 'waiting for sealed-secrets'}`,
      };
    }
    case 'SealedSecretsReady':
      return {
        ...s,
        status: 'running',
        step: NEXT_STEP['sealed-secrets-wait'],
        sealedSecretsController: event.data.controller ?? null,
        // A certificate given in the request skips the check: no controller was looked at.
        message:
          event.data.source === 'cluster'
            ? 'sealed-secrets controller available; fetching its certificate'
            : 'no controller checked (the request gave the sealing certificate); reading that certificate',
      };
    case 'CertFetched':
      return {
        ...s,
        status: 'running',
        step: NEXT_STEP['cert-fetch'],
        certFingerprint: event.data.fingerprint_sha256,
        message: 'certificate fetched; running the full pass',
      };
    case 'FullPushed':
      return {
        ...s,
        fullCommit: event.data.commit,
        unchangedPasses: withPass(s, 'full-pass', event.data.unchanged),
        message: `full tree ${event.data.unchanged ? 'unchanged at' : 'pushed as'} ${event.data.commit.slice(0, 12)}`,
      };
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
      return state.status === 'none' ? [{ type: 'ScaffoldRequested', data: command.data }] : [];
    case 'CompleteStep': {
      // A late or duplicate result (redelivery after the step already advanced) is dropped.
      if (isTerminal(state) || state.step !== command.step || command.result.type !== STEP_RESULT[command.step])
        return [];
      // FullPushed landed but the process died before ScaffoldSucceeded: finish without a second FullPushed.
      const events: EventDraft[] = command.step === 'full-pass' && state.fullCommit ? [] : [command.result];
      if (command.step === 'full-pass' && command.result.type === 'FullPushed') {
        events.push({
          type: 'ScaffoldSucceeded',
          data: { infra_commit: state.infraCommit ?? '', full_commit: state.fullCommit ?? command.result.data.commit },
        });
      } else if (state.cancelRequested) {
        events.push({ type: 'ScaffoldCancelled', data: { step: NEXT_STEP[command.step] } });
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

/** The run's rules whole, as the event store's `handleCommand` runs them (it knows no aggregate of its own). */
export const runDecider: Decider<RunState, Command> = { initialState, evolve, decide };

/** Whether an event starts `step`: its trigger, or an operator's re-drive of it. */
export function triggers(event: EventDraft, step: Step): boolean {
  return (
    STEP_TRIGGERS[step].includes(event.type) || (event.type === 'StepRedriveRequested' && event.data.step === step)
  );
}
