import type { EventDraft } from '#libs/events';
import { Command, decide, fold, MAX_ATTEMPTS_PER_STEP, RunRuleViolation, STALL_CHECK, triggers } from './decider';
import { SCAFFOLD_REQUEST, STEP_RESULTS } from '../../../test/support/run-fixtures';

const request = SCAFFOLD_REQUEST;
const at = (drafts: EventDraft[]) => drafts.map((d) => ({ ...d, time: '2026-01-01T00:00:00.000Z' }));
/** given events, when command, then events */
const given = (...events: EventDraft[]) => ({ when: (c: Command) => decide(c, fold(at(events))) });

const requested: EventDraft = { type: 'ScaffoldRequested', data: request };
const { 'infra-pass': infra, 'sealed-secrets-wait': ready, 'cert-fetch': fetched, 'full-pass': full } = STEP_RESULTS;

describe('run decider', () => {
  it('requests a run once', () => {
    // The run records the plan it starts with: the current one.
    expect(given().when({ type: 'RequestScaffold', data: request })).toEqual([
      { type: 'ScaffoldRequested', data: { ...request, plan: { kind: 'scaffold', version: 1 } } },
    ]);
    expect(given(requested).when({ type: 'RequestScaffold', data: request })).toEqual([]);
  });

  it('advances step by step and succeeds after the full pass', () => {
    expect(given(requested).when({ type: 'CompleteStep', step: 'infra-pass', result: infra })).toEqual([infra]);
    expect(given(requested, infra).when({ type: 'CompleteStep', step: 'sealed-secrets-wait', result: ready })).toEqual([
      ready,
    ]);
    expect(given(requested, infra, ready).when({ type: 'CompleteStep', step: 'cert-fetch', result: fetched })).toEqual([
      fetched,
    ]);
    expect(
      given(requested, infra, ready, fetched).when({ type: 'CompleteStep', step: 'full-pass', result: full }),
    ).toEqual([
      full,
      { type: 'ScaffoldSucceeded', data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) } },
    ]);
    const state = fold(
      at([
        requested,
        infra,
        ready,
        fetched,
        full,
        { type: 'ScaffoldSucceeded', data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) } },
      ]),
    );
    expect(state.status).toBe('succeeded');
    expect(state.refused).toEqual([]);
  });

  it("keeps the passes' provenance: the newest reference commit and the cluster's folder, an older pass's where the newer has none", () => {
    const withProvenance = (e: EventDraft, data: Record<string, unknown>): EventDraft =>
      ({ ...e, data: { ...e.data, ...data } }) as EventDraft;
    const infraA = withProvenance(infra, { reference_commit: 'c'.repeat(40), gitops_path: 'kubernetes/acme' });
    const fullB = withProvenance(full, { reference_commit: 'd'.repeat(40), reference_dirty: true });
    const afterInfra = fold(at([requested, infraA]));
    expect([afterInfra.reference, afterInfra.gitopsPath]).toEqual([
      { commit: 'c'.repeat(40), dirty: false },
      'kubernetes/acme',
    ]);
    const afterFull = fold(at([requested, infraA, ready, fetched, fullB]));
    expect([afterFull.reference, afterFull.gitopsPath]).toEqual([
      { commit: 'd'.repeat(40), dirty: true },
      'kubernetes/acme',
    ]);
    expect(fold(at([requested, infra])).gitopsPath).toBeUndefined();
  });

  describe('says what the run pushed, true to its passes', () => {
    const succeeded = (infraPass: EventDraft, fullPass: EventDraft): EventDraft => ({
      type: 'ScaffoldSucceeded',
      data: { infra_commit: 'a'.repeat(40), full_commit: (fullPass.data as { commit: string }).commit },
    });
    const unchanged = <T extends EventDraft>(e: T): T => ({ ...e, data: { ...e.data, unchanged: true } });
    const outcome = (infraPass: EventDraft, fullPass: EventDraft) =>
      fold(at([requested, infraPass, ready, fetched, fullPass, succeeded(infraPass, fullPass)])).message;

    it.each([
      ['both passes pushed', infra, full, 'both passes pushed'],
      ['nothing: both trees already on the branch', unchanged(infra), unchanged(full), /^nothing pushed/],
      ['the full pass only', unchanged(infra), full, /^full pass pushed; the infrastructure was already on the branch/],
      ['the infrastructure only', infra, unchanged(full), /^infrastructure pushed; the full tree was already/],
    ])('%s', (_what, infraPass, fullPass, said) => {
      expect(outcome(infraPass, fullPass)).toMatch(said);
    });

    it('names no controller when the request gave the certificate, and the one it checked otherwise', () => {
      expect(fold(at([requested, infra, ready])).message).toMatch(/^no controller checked/);
      const checked: EventDraft = {
        type: 'SealedSecretsReady',
        data: { source: 'cluster', controller: { namespace: 'kube-system', name: 'sealed-secrets' } },
      };
      expect(fold(at([requested, infra, checked])).message).toMatch(/^sealed-secrets controller available/);
    });
  });

  it('takes a SOPS run from the infrastructure pass straight to the full pass', () => {
    const sopsRequested: EventDraft = {
      type: 'ScaffoldRequested',
      data: { ...request, target: { kind: 'age_recipients', recipients: ['age1x'] } },
    };
    expect(fold(at([sopsRequested, infra])).step).toBe('full-pass');
    expect(given(sopsRequested, infra).when({ type: 'CompleteStep', step: 'full-pass', result: full })).toEqual([
      full,
      { type: 'ScaffoldSucceeded', data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) } },
    ]);
    expect(
      given(sopsRequested, infra).when({ type: 'CompleteStep', step: 'sealed-secrets-wait', result: ready }),
    ).toEqual([]);
    expect(triggers(infra, 'full-pass')).toBe(true);
    expect(fold(at([requested, infra])).step).toBe('sealed-secrets-wait');
  });

  it('drops a duplicate or late step result', () => {
    expect(given(requested, infra).when({ type: 'CompleteStep', step: 'infra-pass', result: infra })).toEqual([]);
    expect(given(requested).when({ type: 'CompleteStep', step: 'full-pass', result: full })).toEqual([]);
    expect(given(requested).when({ type: 'CompleteStep', step: 'infra-pass', result: full })).toEqual([]);
  });

  it('finishes without a second FullPushed when the process died between the two appends', () => {
    expect(
      given(requested, infra, ready, fetched, full).when({ type: 'CompleteStep', step: 'full-pass', result: full }),
    ).toEqual([{ type: 'ScaffoldSucceeded', data: { infra_commit: 'a'.repeat(40), full_commit: 'b'.repeat(40) } }]);
  });

  it('retries a retryable failure up to the limit, then fails the run', () => {
    const fail: Command = { type: 'FailStep', step: 'infra-pass', reason: 'push rejected', retryable: true };
    expect(given(requested).when(fail)).toEqual([
      { type: 'StepFailed', data: { step: 'infra-pass', attempt: 1, reason: 'push rejected', will_retry: true } },
    ]);
    const earlier: EventDraft[] = Array.from({ length: MAX_ATTEMPTS_PER_STEP - 1 }, (_, i) => ({
      type: 'StepFailed',
      data: { step: 'infra-pass', attempt: i + 1, reason: 'x', will_retry: true },
    }));
    expect(given(requested, ...earlier).when(fail)).toEqual([
      {
        type: 'StepFailed',
        data: { step: 'infra-pass', attempt: MAX_ATTEMPTS_PER_STEP, reason: 'push rejected', will_retry: false },
      },
      { type: 'ScaffoldFailed', data: { step: 'infra-pass', reason: 'push rejected' } },
    ]);
  });

  it('fails at once on a failure retrying cannot help', () => {
    expect(given(requested).when({ type: 'FailStep', step: 'infra-pass', reason: 'auth', retryable: false })).toEqual([
      { type: 'StepFailed', data: { step: 'infra-pass', attempt: 1, reason: 'auth', will_retry: false } },
      { type: 'ScaffoldFailed', data: { step: 'infra-pass', reason: 'auth' } },
    ]);
  });

  it('fails the step the run is at on a failure found outside its worker (a Job that failed or could not start)', () => {
    const jobFailed: Command = { type: 'FailCurrentStep', reason: 'Job failed', retryable: false };
    expect(given(requested).when(jobFailed)).toEqual([
      { type: 'StepFailed', data: { step: 'infra-pass', attempt: 1, reason: 'Job failed', will_retry: false } },
      { type: 'ScaffoldFailed', data: { step: 'infra-pass', reason: 'Job failed' } },
    ]);
    expect(given(requested, infra, ready).when(jobFailed)).toEqual([
      { type: 'StepFailed', data: { step: 'cert-fetch', attempt: 1, reason: 'Job failed', will_retry: false } },
      { type: 'ScaffoldFailed', data: { step: 'cert-fetch', reason: 'Job failed' } },
    ]);
    expect(given(requested, infra).when({ type: 'FailCurrentStep', reason: 'timeout', retryable: true })).toEqual([
      { type: 'StepFailed', data: { step: 'sealed-secrets-wait', attempt: 1, reason: 'timeout', will_retry: true } },
    ]);
  });

  it('fails no step of a run that was never requested or has ended, so a second report of the same failure is a no-op', () => {
    const jobFailed: Command = { type: 'FailCurrentStep', reason: 'Job failed', retryable: false };
    expect(given().when(jobFailed)).toEqual([]);
    expect(
      given(
        requested,
        { type: 'StepFailed', data: { step: 'infra-pass', attempt: 1, reason: 'Job failed', will_retry: false } },
        { type: 'ScaffoldFailed', data: { step: 'infra-pass', reason: 'Job failed' } },
      ).when(jobFailed),
    ).toEqual([]);
    expect(given(requested, { type: 'ScaffoldCancelled', data: { step: 'infra-pass' } }).when(jobFailed)).toEqual([]);
  });

  it('re-drives a run quiet for longer than its step may be silent, once, and never an ended or a recent one', () => {
    // Every event of `given` is stamped 2026-01-01T00:00:00Z.
    const stalled = (now: string) => ({ type: 'RedriveStalled' as const, quietMs: 60_000, now });
    const redrive = (step: string) => ({ type: 'StepRedriveRequested', data: { step, requested_by: STALL_CHECK } });
    expect(given(requested, infra).when(stalled('2026-01-01T00:01:00.000Z'))).toEqual([redrive('sealed-secrets-wait')]);
    expect(given(requested).when(stalled('2026-01-01T00:05:00.000Z'))).toEqual([redrive('infra-pass')]);
    expect(given(requested, infra).when(stalled('2026-01-01T00:00:59.999Z'))).toEqual([]);
    expect(given().when(stalled('2026-01-01T00:05:00.000Z'))).toEqual([]);
    const failed: EventDraft = { type: 'ScaffoldFailed', data: { step: 'infra-pass', reason: 'x' } };
    expect(given(requested, failed).when(stalled('2026-01-01T00:05:00.000Z'))).toEqual([]);
    // The re-drive is an event: a second check right after it (another replica's) finds the run no longer quiet.
    const redriven = redrive('sealed-secrets-wait') as EventDraft;
    const after = decide(
      stalled('2026-01-01T00:01:00.000Z'),
      fold([...at([requested, infra]), { ...redriven, time: '2026-01-01T00:01:00.000Z' }]),
    );
    expect(after).toEqual([]);
    expect(triggers(redriven, 'sealed-secrets-wait')).toBe(true);
  });

  it('cancels at the next step boundary, never twice, and not after the end', () => {
    const cancelReq: EventDraft = { type: 'ScaffoldCancelRequested', data: { requested_by: 'ops' } };
    expect(given(requested).when({ type: 'RequestCancel', requestedBy: 'ops' })).toEqual([cancelReq]);
    expect(given(requested, cancelReq).when({ type: 'RequestCancel', requestedBy: 'ops' })).toEqual([]);
    expect(given(requested, cancelReq).when({ type: 'StopIfCancelled', step: 'infra-pass' })).toEqual([
      { type: 'ScaffoldCancelled', data: { step: 'infra-pass' } },
    ]);
    expect(given(requested).when({ type: 'StopIfCancelled', step: 'infra-pass' })).toEqual([]);
    expect(given(requested, cancelReq).when({ type: 'CompleteStep', step: 'infra-pass', result: infra })).toEqual([
      infra,
      { type: 'ScaffoldCancelled', data: { step: 'sealed-secrets-wait' } },
    ]);
    expect(() => given().when({ type: 'RequestCancel', requestedBy: 'ops' })).toThrow(RunRuleViolation);
    expect(() =>
      given(requested, { type: 'ScaffoldFailed', data: { step: 'infra-pass', reason: 'x' } }).when({
        type: 'RequestCancel',
        requestedBy: 'ops',
      }),
    ).toThrow(/already failed/);
  });

  describe('refuses events that cannot belong to the run (appended by someone else than decide)', () => {
    const otherRepo: EventDraft = {
      type: 'ScaffoldRequested',
      data: {
        ...request,
        repo_url: 'https://attacker.example.com/x.git',
        target: { kind: 'sealing_cert', fingerprint_sha256: 'ee', not_after: '2030-01-01T00:00:00.000Z' },
      },
    };
    const refusedOf = (events: EventDraft[]) => fold(at(events)).refused.map((r) => r.reason);

    it('a second ScaffoldRequested never redirects the run', () => {
      const state = fold(at([requested, otherRepo, infra]));
      expect(state.request).toEqual(request);
      expect(state.step).toBe('sealed-secrets-wait');
      expect(state.refused).toEqual([
        {
          seq: null,
          type: 'ScaffoldRequested',
          reason: 'a second ScaffoldRequested on a run that was already requested',
        },
      ]);
    });

    it('a certificate other than the one the run was given, or fetched, is refused; the run waits for its own', () => {
      const attackers: EventDraft = {
        type: 'CertFetched',
        data: { fingerprint_sha256: 'ff'.repeat(32), not_after: '2030-01-01T00:00:00.000Z' },
      };
      const state = fold(at([requested, infra, ready, attackers]));
      expect(state.step).toBe('cert-fetch');
      expect(state.certFingerprint).toBeNull();
      expect(state.refused[0].reason).toBe(
        `CertFetched for certificate ${'ff'.repeat(8)}… while the run's certificate is ab…`,
      );
      // With a kubeconfig target the first fetched certificate is the run's; another one later is refused.
      const kube: EventDraft = {
        type: 'ScaffoldRequested',
        data: { ...request, target: { kind: 'kubeconfig_secret', namespace: 'ns', name: 'k', key: 'value' } },
      };
      const first: EventDraft = {
        type: 'CertFetched',
        data: { fingerprint_sha256: 'cd'.repeat(32), not_after: '2030-01-01T00:00:00.000Z' },
      };
      expect(fold(at([kube, infra, ready, first])).certFingerprint).toBe('cd'.repeat(32));
      expect(refusedOf([kube, infra, ready, first, attackers])).toEqual([`CertFetched while the run is at full-pass`]);
    });

    it('results out of order, events before the request or after the end, and a success naming other commits', () => {
      expect(refusedOf([infra])).toEqual(["InfraPushed before the run's ScaffoldRequested"]);
      expect(refusedOf([requested, full])).toEqual(['FullPushed while the run is at infra-pass']);
      expect(
        refusedOf([requested, { type: 'ScaffoldSucceeded', data: { infra_commit: 'a', full_commit: 'b' } }]),
      ).toEqual(['ScaffoldSucceeded that names commits the run did not push']);
      expect(
        refusedOf([
          requested,
          { type: 'StepFailed', data: { step: 'full-pass', attempt: 1, reason: 'x', will_retry: false } },
        ]),
      ).toEqual(['StepFailed for full-pass while the run is at infra-pass']);
      const cancelled: EventDraft = { type: 'ScaffoldCancelled', data: { step: 'infra-pass' } };
      expect(refusedOf([requested, cancelled, infra])).toEqual(['InfraPushed after the run ended (cancelled)']);
      const sops: EventDraft = {
        type: 'ScaffoldRequested',
        data: { ...request, target: { kind: 'age_recipients', recipients: ['age1x'] } },
      };
      expect(refusedOf([sops, fetched])).toEqual(['CertFetched while the run is at infra-pass']);
    });

    it('decide works from the state without the refused events', () => {
      expect(given(requested, otherRepo).when({ type: 'CompleteStep', step: 'infra-pass', result: infra })).toEqual([
        infra,
      ]);
    });
  });
});
