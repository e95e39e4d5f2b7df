/**
 * The run's rules walked over the current scaffold plan, step by step, as given/when/then specifications: each
 * step's trigger, its result, a failure and its retry, a failure retrying cannot help, and a cancel at each step,
 * for each kind of target (the SOPS branch skips the sealed-secrets wait and the certificate).
 */
import { firstStep, nextStep, RUN_PLANS, triggerTable } from '#libs/events';
import type { EventDraft, ScaffoldTarget, Step, TargetKind } from '#libs/events';
import { given } from '../../../test/support/given-when-then';
import { SCAFFOLD_REQUEST, STEP_RESULTS } from '../../../test/support/run-fixtures';
import { RunRuleViolation, triggers } from './decider';

const plan = RUN_PLANS.scaffold;
const TARGETS: Record<TargetKind, ScaffoldTarget> = {
  sealing_cert: SCAFFOLD_REQUEST.target,
  kubeconfig_secret: { kind: 'kubeconfig_secret', namespace: 'clusters', name: 'c1', key: 'value' },
  age_recipients: { kind: 'age_recipients', recipients: ['age1x'] },
};
const RESULTS = STEP_RESULTS;
const SUCCEEDED: EventDraft = {
  type: 'ScaffoldSucceeded',
  data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) },
};
const cancelRequested: EventDraft = { type: 'ScaffoldCancelRequested', data: { requested_by: 'ops' } };

/** The steps a run of this target goes through, in the plan's order, from the plan. */
function pathOf(kind: TargetKind): Step[] {
  const path: Step[] = [];
  for (let step: string | null = firstStep(plan, kind); step; step = nextStep(plan, step, kind))
    path.push(step as Step);
  return path;
}

/** Each step of a target's path with the run's history up to (and including) its trigger. */
function walk(kind: TargetKind): Array<{ step: Step; last: boolean; before: EventDraft[] }> {
  let before: EventDraft[] = [{ type: 'ScaffoldRequested', data: { ...SCAFFOLD_REQUEST, target: TARGETS[kind] } }];
  return pathOf(kind).map((step, i, path) => {
    const at = { step, last: i === path.length - 1, before };
    before = [...before, RESULTS[step]];
    return at;
  });
}

describe.each(Object.keys(TARGETS) as TargetKind[])('a run of the scaffold plan for a %s target', (kind) => {
  it('goes through the steps its plan gives it', () => {
    expect(pathOf(kind)).toEqual(
      kind === 'age_recipients'
        ? ['infra-pass', 'full-pass']
        : ['infra-pass', 'sealed-secrets-wait', 'cert-fetch', 'full-pass'],
    );
  });

  describe.each(walk(kind))('at $step', ({ step, last, before }) => {
    const result = RESULTS[step];
    const outcome = last ? [result, SUCCEEDED] : [result];

    it('is started by its trigger, and the run is at it', () => {
      expect(given(...before).state().step).toBe(step);
      expect(triggers(before.at(-1)!, step, plan)).toBe(true);
      expect(triggerTable(plan)[step].map((t) => t.type)).toContain(before.at(-1)!.type);
    });

    it(`records its result${last ? ', and the run succeeds' : ''}`, () => {
      const after = given(...before)
        .when({ type: 'CompleteStep', step, result })
        .then(outcome);
      expect(given(...after).state().status).toBe(last ? 'succeeded' : 'running');
      // A duplicate result (a redelivery) appends nothing.
      given(...after)
        .when({ type: 'CompleteStep', step, result })
        .then([]);
    });

    it('fails, is retried, and then records its result', () => {
      const failed = given(...before)
        .when({ type: 'FailStep', step, reason: 'unreachable', retryable: true })
        .then([{ type: 'StepFailed', data: { step, attempt: 1, reason: 'unreachable', will_retry: true } }]);
      expect(given(...failed).state()).toMatchObject({ status: 'retrying', step });
      given(...failed)
        .when({ type: 'CompleteStep', step, result })
        .then(outcome);
    });

    it('fails the run on a failure retrying cannot help', () => {
      given(...before)
        .when({ type: 'FailStep', step, reason: 'refused', retryable: false })
        .then([
          { type: 'StepFailed', data: { step, attempt: 1, reason: 'refused', will_retry: false } },
          { type: 'ScaffoldFailed', data: { step, reason: 'refused' } },
        ]);
    });

    it('is cancelled at its boundary; one that finishes meanwhile stops the run at the next (the last one succeeds)', () => {
      given(...before)
        .when({ type: 'RequestCancel', requestedBy: 'ops' })
        .then([cancelRequested]);
      given(...before, cancelRequested)
        .when({ type: 'StopIfCancelled', step })
        .then([{ type: 'ScaffoldCancelled', data: { step } }]);
      const next = nextStep(plan, step, kind) as Step | null;
      given(...before, cancelRequested)
        .when({ type: 'CompleteStep', step, result })
        .then(last ? outcome : [result, { type: 'ScaffoldCancelled', data: { step: next } }]);
      // A failure while cancelling ends the run cancelled, not failed, and not retried.
      given(...before, cancelRequested)
        .when({ type: 'FailStep', step, reason: 'x', retryable: true })
        .then([
          { type: 'StepFailed', data: { step, attempt: 1, reason: 'x', will_retry: false } },
          { type: 'ScaffoldCancelled', data: { step } },
        ]);
    });
  });
});

describe('the SOPS branch', () => {
  const [atInfra] = walk('age_recipients');
  const sops = atInfra.before;

  it('skips the sealed-secrets wait and the certificate: InfraPushed starts the full pass', () => {
    const after = given(...sops)
      .when({ type: 'CompleteStep', step: 'infra-pass', result: RESULTS['infra-pass'] })
      .then([RESULTS['infra-pass']]);
    expect(given(...after).state().step).toBe('full-pass');
    expect(triggers(RESULTS['infra-pass'], 'full-pass', plan)).toBe(true);
    given(...after)
      .when({ type: 'CompleteStep', step: 'sealed-secrets-wait', result: RESULTS['sealed-secrets-wait'] })
      .then([]);
    given(...after)
      .when({ type: 'StopIfCancelled', step: 'sealed-secrets-wait' })
      .then([]);
  });
});

describe('commands the rules refuse', () => {
  const requested: EventDraft = { type: 'ScaffoldRequested', data: SCAFFOLD_REQUEST };
  const done = [requested, ...pathOf('sealing_cert').map((s) => RESULTS[s]), SUCCEEDED];

  it('a cancel or a re-drive of a run that does not exist, or has ended', () => {
    given().when({ type: 'RequestCancel', requestedBy: 'ops' }).thenRefused(RunRuleViolation);
    given().when({ type: 'Redrive', requestedBy: 'ops' }).thenRefused('no such run');
    given(...done)
      .when({ type: 'RequestCancel', requestedBy: 'ops' })
      .thenRefused(/already succeeded/);
    given(...done)
      .when({ type: 'Redrive', requestedBy: 'ops' })
      .thenRefused(/already succeeded/);
  });
});
