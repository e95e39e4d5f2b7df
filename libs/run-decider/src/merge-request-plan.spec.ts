/**
 * A run delivered as merge requests (the scaffold-mr plan): each pass proposed on a branch of its own, the run
 * waiting for each merge. Both waits end with MergeRequestMerged, so the event names its step and ends only that one.
 */
import type { EventDraft } from '#libs/events';
import { given } from '../../../test/support/given-when-then';
import { SCAFFOLD_REQUEST, STEP_RESULTS } from '../../../test/support/run-fixtures';
import { decide, fold, triggers } from './decider';

const delivery = { mode: 'merge_request' } as const;
const requested: EventDraft = {
  type: 'ScaffoldRequested',
  data: { ...SCAFFOLD_REQUEST, delivery, plan: { kind: 'scaffold-mr', version: 1 } },
};
const {
  'infra-request': infraOpened,
  'infra-merge': infraMerged,
  'sealed-secrets-wait': ready,
  'cert-fetch': fetched,
  'full-request': fullOpened,
  'full-merge': fullMerged,
} = STEP_RESULTS;

describe('a run delivered as merge requests', () => {
  it('a request for merge-request delivery starts on the scaffold-mr plan, at the infrastructure request', () => {
    const [event] = decide({ type: 'RequestScaffold', data: { ...SCAFFOLD_REQUEST, delivery } }, fold([]));
    expect(event).toMatchObject({ data: { plan: { kind: 'scaffold-mr', version: 1 } } });
    const [push] = decide({ type: 'RequestScaffold', data: SCAFFOLD_REQUEST }, fold([]));
    expect(push).toMatchObject({ data: { plan: { kind: 'scaffold', version: 1 } } });
    expect(given(requested).state()).toMatchObject({ status: 'queued', step: 'infra-request' });
  });

  it('waits for the infrastructure merge before the controller, and only a merge of that request moves it on', () => {
    const opened = given(requested)
      .when({ type: 'CompleteStep', step: 'infra-request', result: infraOpened })
      .then([infraOpened]);
    expect(given(...opened).state()).toMatchObject({
      step: 'infra-merge',
      infraCommit: null,
      mergeRequests: [{ pass: 'infra', number: 1, state: 'open', commit: 'c'.repeat(40) }],
    });
    // The full pass's merge is not the infrastructure's: refused whoever appends it.
    expect(given(...opened, fullMerged).state().refused).toEqual([
      expect.objectContaining({
        type: 'MergeRequestMerged',
        reason: 'MergeRequestMerged while the run is at infra-merge',
      }),
    ]);
    const merged = given(...opened)
      .when({ type: 'CompleteStep', step: 'infra-merge', result: infraMerged })
      .then([infraMerged]);
    expect(given(...merged).state()).toMatchObject({
      step: 'sealed-secrets-wait',
      infraCommit: 'a'.repeat(40),
      mergeRequests: [{ pass: 'infra', state: 'merged' }],
    });
  });

  it("the full pass's merge ends the run, naming the merge commits", () => {
    const history = [requested, infraOpened, infraMerged, ready, fetched, fullOpened];
    given(...history)
      .when({ type: 'CompleteStep', step: 'full-merge', result: fullMerged })
      .then([
        fullMerged,
        { type: 'ScaffoldSucceeded', data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) } },
      ]);
  });

  it('a request closed unmerged fails the run with its reason (no retry can merge it)', () => {
    const closed: EventDraft = {
      type: 'MergeRequestClosed',
      data: {
        step: 'infra-merge',
        pass: 'infra',
        request: {
          number: 1,
          url: 'https://git.example.com/fleet/pulls/1',
          head: 'scaffolder/c1/infra/run1',
          base: 'main',
        },
        reason: 'merge request #1 was closed without merging',
      },
    };
    const after = given(requested, infraOpened)
      .when({ type: 'CompleteStep', step: 'infra-merge', result: closed })
      .then([
        closed,
        {
          type: 'ScaffoldFailed',
          data: { step: 'infra-merge', reason: 'merge request #1 was closed without merging' },
        },
      ]);
    expect(given(...after).state()).toMatchObject({
      status: 'failed',
      mergeRequests: [{ pass: 'infra', state: 'closed' }],
    });
  });

  it('a SOPS run goes from the infrastructure merge to the full request', () => {
    const sops: EventDraft = {
      type: 'ScaffoldRequested',
      data: { ...(requested.data as object), target: { kind: 'age_recipients', recipients: ['age1x'] } } as never,
    };
    expect(given(sops, infraOpened, infraMerged).state().step).toBe('full-request');
  });

  it('each merge triggers only the step after its own wait', () => {
    expect(triggers(infraMerged, 'sealed-secrets-wait')).toBe(true);
    expect(triggers(infraMerged, 'full-request')).toBe(true); // a SOPS run's next step
    expect(triggers(fullMerged, 'sealed-secrets-wait')).toBe(false);
    expect(triggers(fullMerged, 'full-request')).toBe(false);
    expect(triggers(infraOpened, 'infra-merge')).toBe(true);
    expect(triggers(fullOpened, 'infra-merge')).toBe(false);
  });
});
