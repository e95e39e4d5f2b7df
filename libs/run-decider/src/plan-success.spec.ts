/**
 * The run's success follows from its plan: the result of the plan's last step, whatever that step is. A test plan
 * (a kind of its own, so the current scaffold plan stays the one new runs start with) ends with a generic step
 * whose result is StepCompleted: the wait for the new cluster's Flux to report the full tree Ready.
 */
import { defineRunPlan, deployRunPlan, RUN_PLANS } from '#libs/events';
import type { EventDraft, Step } from '#libs/events';
import { given } from '../../../test/support/given-when-then';
import { SCAFFOLD_REQUEST, STEP_RESULTS } from '../../../test/support/run-fixtures';

const SCAFFOLD_AND_WAIT = defineRunPlan({
  ...RUN_PLANS.scaffold,
  kind: 'scaffold-and-wait',
  version: 1,
  steps: [
    ...RUN_PLANS.scaffold.steps,
    {
      name: 'flux-ready-wait',
      title: "the wait for the new cluster's Flux to report the full tree Ready",
      result: 'StepCompleted',
      runner: { progress: false, writesInputs: [] },
    },
  ],
});
deployRunPlan(SCAFFOLD_AND_WAIT);

const wait = 'flux-ready-wait' as Step;
const requested: EventDraft = {
  type: 'ScaffoldRequested',
  data: { ...SCAFFOLD_REQUEST, plan: { kind: SCAFFOLD_AND_WAIT.kind, version: 1 } },
};
const { 'infra-pass': infra, 'sealed-secrets-wait': ready, 'cert-fetch': fetched, 'full-pass': full } = STEP_RESULTS;
const reconciled: EventDraft = { type: 'StepCompleted', data: { step: wait, summary: 'Kustomization apps Ready' } };
const succeeded: EventDraft = {
  type: 'ScaffoldSucceeded',
  data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) },
};

describe('a plan whose last step ends with StepCompleted', () => {
  it('the full pass is no longer the end: its FullPushed moves the run to the last step', () => {
    const after = given(requested, infra, ready, fetched)
      .when({ type: 'CompleteStep', step: 'full-pass', result: full })
      .then([full]);
    expect(given(...after).state()).toMatchObject({ status: 'running', step: wait, fullCommit: 'b'.repeat(40) });
  });

  it("the last step's StepCompleted makes the run succeed, naming the commits the run pushed", () => {
    const after = given(requested, infra, ready, fetched, full)
      .when({ type: 'CompleteStep', step: wait, result: reconciled })
      .then([reconciled, succeeded]);
    expect(given(...after).state()).toMatchObject({ status: 'succeeded', refused: [] });
  });

  it('the result landed but the process died before the success: the run finishes without a second result', () => {
    given(requested, infra, ready, fetched, full, reconciled)
      .when({ type: 'CompleteStep', step: wait, result: reconciled })
      .then([succeeded]);
  });

  it('a cancel requested during the last step changes nothing once it is done: the work is', () => {
    const cancel: EventDraft = { type: 'ScaffoldCancelRequested', data: { requested_by: 'ops' } };
    given(requested, infra, ready, fetched, full, cancel)
      .when({ type: 'CompleteStep', step: wait, result: reconciled })
      .then([reconciled, succeeded]);
  });

  it('a success appended before the last step recorded its result is refused (someone else than decide wrote it)', () => {
    const state = given(requested, infra, ready, fetched, full, succeeded).state();
    expect(state.status).toBe('running');
    expect(state.refused.map((r) => r.reason)).toEqual(['ScaffoldSucceeded that names commits the run did not push']);
  });

  it('a one-step plan ending with StepCompleted succeeds with no commit to name', () => {
    const CHECK = defineRunPlan({
      kind: 'check',
      version: 1,
      start: 'ScaffoldRequested',
      steps: [
        { name: 'check', title: 'the check', result: 'StepCompleted', runner: { progress: false, writesInputs: [] } },
      ],
    });
    deployRunPlan(CHECK);
    const checked: EventDraft = { type: 'StepCompleted', data: { step: 'check' as Step, summary: 'fine' } };
    given({ type: 'ScaffoldRequested', data: { ...SCAFFOLD_REQUEST, plan: { kind: 'check', version: 1 } } })
      .when({ type: 'CompleteStep', step: 'check' as Step, result: checked })
      .then([checked, { type: 'ScaffoldSucceeded', data: { infra_commit: '', full_commit: '' } }]);
  });
});
