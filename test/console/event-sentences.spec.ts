import { eventText, progressLine } from '../../src/ctl/run-text';
import { eventSummary } from '../../src/console/ui/format';
import type { RunEvent } from '../../src/console/ui/api';

/** An event as both the console and scaffolderctl receive it from the API. */
const event = (type: string, data: Record<string, unknown>): RunEvent => ({
  seq: 1,
  id: '00000000-0000-4000-8000-000000000000',
  type,
  schema_version: 2,
  time: '2026-01-01T10:00:41.000Z',
  causation_id: null,
  data,
});

const COMMIT = '1a2b3c4d5e6f'.padEnd(40, '0');

/**
 * What a run did, as scaffolderctl and the console say it: each sentence true to the event's data (a pass
 * that found its tree on the branch pushed nothing; a certificate given in the request means no controller
 * was checked), and the same words in both, so the two renderings cannot drift apart on what happened.
 */
describe('the sentences of a run, in the terminal and in the console', () => {
  it.each([
    [
      'a certificate given in the request: no controller was checked',
      event('SealedSecretsReady', { source: 'given_certificate', controller: null }),
      'no controller checked: the request gave the sealing certificate',
    ],
    [
      'a version 1 event of a given certificate (no controller field)',
      event('SealedSecretsReady', { source: 'given_certificate' }),
      'no controller checked: the request gave the sealing certificate',
    ],
    [
      'the controller found Available, by name',
      event('SealedSecretsReady', {
        source: 'cluster',
        controller: { namespace: 'kube-system', name: 'sealed-secrets' },
      }),
      'sealed-secrets controller kube-system/sealed-secrets is ready',
    ],
    [
      'an infrastructure pass that pushed nothing',
      event('InfraPushed', { commit: COMMIT, files_changed: 0, unchanged: true }),
      'infrastructure already on the branch: nothing pushed (at 1a2b3c4d5e6f)',
    ],
    [
      'a full pass that pushed nothing',
      event('FullPushed', { commit: COMMIT, objects_sealed: 3, unchanged: true }),
      'full tree already on the branch: nothing pushed (at 1a2b3c4d5e6f)',
    ],
    [
      "a step of a run plan whose result carries nothing but what it saw (any plan's step, by its name)",
      event('StepCompleted', {
        step: 'flux-ready-wait',
        summary: 'Kustomization infrastructure Ready at 1a2b3c4d5e6f',
      }),
      'flux-ready-wait done: Kustomization infrastructure Ready at 1a2b3c4d5e6f',
    ],
  ])('%s', (_what, e, said) => {
    expect({ terminal: eventText(e.type, e.data), console: eventSummary(e) }).toEqual({
      terminal: said,
      console: said,
    });
  });

  it('says a pass pushed only when it did', () => {
    const pushed = event('InfraPushed', { commit: COMMIT, files_changed: 14 });
    expect(progressLine(pushed)).toBe('10:00:41  InfraPushed             infra pass pushed 1a2b3c4d5e6f (14 files)');
    expect(eventSummary(pushed)).toBe('infrastructure commit 1a2b3c4d5e6f, 14 files changed');
  });
});
