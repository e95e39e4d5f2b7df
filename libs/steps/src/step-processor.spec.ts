import { randomUUID } from 'node:crypto';
import { TimeoutError } from '@nats-io/nats-core';
import {
  ACK,
  Delivery,
  InMemoryEventStore,
  InMemoryRunInputs,
  InMemoryRunLogStore,
  retryDelayMs,
} from '#libs/event-store';
import type { EventDraft } from '#libs/events';
import { MAX_ATTEMPTS_PER_STEP, RunCommands } from '#libs/run-decider';
import type { StepSettings } from './handler/settings';
import { StepError, StepHandler } from './handler/step-handler';
import { StepProcessor } from './step-processor';
import { RunInputStepCrashRecords, StepCrashGuard, StepCrashRecords } from './step-crashes';
import { SCAFFOLD_REQUEST } from '../../../test/support/run-fixtures';

const request = SCAFFOLD_REQUEST;
const settings = { ackWaitMs: 1000, stepTimeoutMs: 5000, concurrency: 1 } as StepSettings;
/** These steps never clone: a clone would be a test error. */
const noClones = {
  clone: () => Promise.reject(new Error('no clone expected')),
  withScratchClone: () => Promise.reject(new Error('no clone expected')),
  handOver: () => Promise.reject(new Error('no clone expected')),
  takeOver: () => Promise.reject(new Error('no clone expected')),
  withoutLocalPaths: (text: string) => text,
};
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The step processor on the in-memory store: given a run, when its trigger event is delivered, then events and a disposition. */
describe('StepProcessor (in-memory event store)', () => {
  let store: InMemoryEventStore;
  let logs: InMemoryRunLogStore;
  let runId: string;
  const infraPushed: EventDraft = { type: 'InfraPushed', data: { commit: 'a'.repeat(40), files_changed: 3 } };
  /** What each processor here works with: the run's commands on the store, fresh inputs, the shared log. */
  const dependencies = (stepSettings: StepSettings = settings) => ({
    commands: new RunCommands(store),
    inputs: new InMemoryRunInputs(),
    logs,
    settings: stepSettings,
    logger: silent,
    workspaces: noClones,
  });
  const processor = (run: StepHandler['run']) => new StepProcessor({ step: 'infra-pass', run }, dependencies());
  const delivery = async (deliveryCount = 1): Promise<Delivery[]> => [
    { event: (await store.readRun(runId)).events[0], deliveryCount },
  ];
  const types = async () => (await store.readRun(runId)).events.map((e) => e.type);

  beforeEach(async () => {
    store = new InMemoryEventStore();
    logs = new InMemoryRunLogStore();
    runId = randomUUID();
    await new RunCommands(store).handle(runId, { type: 'RequestScaffold', data: request });
  });

  it('runs the step on its trigger and records the result', async () => {
    expect(await processor(async () => infraPushed).handle(await delivery())).toEqual(ACK);
    expect(await types()).toEqual(['ScaffoldRequested', 'InfraPushed']);
    expect((await logs.read(runId)).map((l) => l.msg)).toEqual(['infra-pass started (delivery 1)']);
  });

  it("aborts the step's signal at its deadline, so what the step started (git, the pass and its kustomize) is stopped", async () => {
    let signal: AbortSignal | undefined;
    const quick = { ...settings, stepTimeoutMs: 50 } as StepSettings;
    const hanging = new StepProcessor(
      { step: 'infra-pass', run: (ctx) => ((signal = ctx.signal), new Promise<EventDraft>(() => undefined)) },
      dependencies(quick),
    );
    await hanging.handle(await delivery());
    expect(await types()).toEqual(['ScaffoldRequested', 'StepFailed']);
    expect(signal?.aborted).toBe(true);
  });

  it('acknowledges a redelivered trigger without running the step again', async () => {
    let runs = 0;
    const p = processor(async () => (runs++, infraPushed));
    await p.handle(await delivery());
    expect(await p.handle(await delivery(2))).toEqual(ACK);
    expect(runs).toBe(1);
  });

  it('runs a step with two triggers for the later one only: an earlier trigger delivered late starts nothing', async () => {
    const complete = (step: 'infra-pass' | 'sealed-secrets-wait' | 'cert-fetch', result: EventDraft) =>
      new RunCommands(store).handle(runId, { type: 'CompleteStep', step, result });
    await complete('infra-pass', infraPushed);
    await complete('sealed-secrets-wait', {
      type: 'SealedSecretsReady',
      data: { source: 'given_certificate', controller: null },
    });
    await complete('cert-fetch', {
      type: 'CertFetched',
      data: { fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00.000Z' },
    });
    const history = (await store.readRun(runId)).events;
    expect(history.map((e) => e.type)).toEqual([
      'ScaffoldRequested',
      'InfraPushed',
      'SealedSecretsReady',
      'CertFetched',
    ]);
    let runs = 0;
    const fullPass = new StepProcessor(
      {
        step: 'full-pass',
        run: async () => (runs++, { type: 'FullPushed', data: { commit: 'b'.repeat(40), objects_sealed: 0 } }),
      },
      dependencies(),
    );
    // InfraPushed triggers the full pass of SOPS runs; here, delivered after CertFetched, it is stale.
    expect(await fullPass.handle([{ event: history[1], deliveryCount: 1 }])).toEqual(ACK);
    expect(runs).toBe(0);
    expect(await fullPass.handle([{ event: history[3], deliveryCount: 1 }])).toEqual(ACK);
    expect(runs).toBe(1);
  });

  it('acknowledges events that are not its trigger', async () => {
    const [event] = (await store.readRun(runId)).events;
    const other = new StepProcessor({ step: 'full-pass', run: async () => infraPushed }, dependencies());
    expect(await other.handle([{ event, deliveryCount: 1 }])).toEqual(ACK);
    expect(await types()).toEqual(['ScaffoldRequested']);
  });

  it('hands a retryable failure back with backoff, and fails the run on one that retrying cannot help', async () => {
    expect(
      await processor(async () => Promise.reject(new StepError('remote unreachable', true))).handle(await delivery()),
    ).toEqual({ nakDelayMs: 1000 });
    expect(await types()).toEqual(['ScaffoldRequested', 'StepFailed']);
    expect(
      await processor(async () => Promise.reject(new StepError('branch does not exist', false))).handle(
        await delivery(2),
      ),
    ).toEqual(ACK);
    expect(await types()).toEqual(['ScaffoldRequested', 'StepFailed', 'StepFailed', 'ScaffoldFailed']);
  });

  it('hands back a step the event store did not answer for (a failover) without counting an attempt', async () => {
    const unavailable = processor(async () => {
      throw new TimeoutError();
    });
    for (let count = 1; count <= MAX_ATTEMPTS_PER_STEP + 2; count++) {
      const disposition = await unavailable.handle(await delivery(count));
      expect(disposition).toEqual({ nakDelayMs: Math.min(retryDelayMs(count), 5000) });
    }
    expect(await types()).toEqual(['ScaffoldRequested']);
    expect(await processor(async () => infraPushed).handle(await delivery(9))).toEqual(ACK);
    expect(await types()).toEqual(['ScaffoldRequested', 'InfraPushed']);
  });

  it('stops a cancelled run at the step boundary without running the step', async () => {
    await new RunCommands(store).handle(runId, { type: 'RequestCancel', requestedBy: 'ops' });
    let ran = false;
    expect(await processor(async () => ((ran = true), infraPushed)).handle(await delivery())).toEqual(ACK);
    expect(ran).toBe(false);
    expect(await types()).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested', 'ScaffoldCancelled']);
  });

  describe('poison steps: a step at work when its process died MAX_STEP_CRASHES times is parked', () => {
    const MAX = 3;
    let records: StepCrashRecords;
    let seen: string[];
    let process = 0;
    /** A new process (its own id in the crash records) running the step with `run`. */
    const inProcess = (run: StepHandler['run']) =>
      new StepProcessor(
        { step: 'infra-pass', run },
        {
          ...dependencies(),
          crashes: new StepCrashGuard(records, MAX, `process-${++process}`),
          onCrashFound: (step) => seen.push(`crash ${step}`),
          onParked: (step) => seen.push(`parked ${step}`),
        },
      );
    /** A process that dies in the step (an OOM kill): it started the step and never settled it. */
    const dies = () => new StepCrashGuard(records, MAX, `process-${++process}`).started(runId, 'infra-pass');
    const failures = async () =>
      (await store.readRun(runId)).events.flatMap((e) => (e.type === 'StepFailed' ? [e.data] : []));

    beforeEach(() => {
      records = new RunInputStepCrashRecords(new InMemoryRunInputs());
      seen = [];
    });

    it('fails the run with the reason, without running the step, after MAX_STEP_CRASHES crashes', async () => {
      for (let crash = 1; crash <= MAX; crash++) await dies();
      let ran = false;
      expect(await inProcess(async () => ((ran = true), infraPushed)).handle(await delivery(MAX + 1))).toEqual(ACK);
      expect(ran).toBe(false);
      expect(await types()).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
      expect(await failures()).toEqual([
        { step: 'infra-pass', attempt: 1, reason: 'the step crashed the service 3 times; parked', will_retry: false },
      ]);
      // The third crash is found by the process that parks the step (the first two by processes outside this test).
      expect(seen).toEqual(['crash infra-pass', 'parked infra-pass']);
      expect((await logs.read(runId)).map((l) => l.msg)).toEqual([
        'infra-pass not run: the step crashed the service 3 times; parked',
      ]);
    });

    it('runs the step after fewer crashes', async () => {
      for (let crash = 1; crash < MAX; crash++) await dies();
      expect(await inProcess(async () => infraPushed).handle(await delivery(MAX))).toEqual(ACK);
      expect(await types()).toEqual(['ScaffoldRequested', 'InfraPushed']);
      expect(seen).toEqual(['crash infra-pass']);
    });

    it('counts no deliberate retry as a crash, in this process or the next', async () => {
      const unreachable = async (): Promise<EventDraft> => Promise.reject(new StepError('remote unreachable', true));
      for (let count = 1; count <= MAX_ATTEMPTS_PER_STEP; count++) {
        // Every retry in another process, as a redelivery after a nak may be.
        await inProcess(unreachable).handle(await delivery(count));
      }
      expect((await failures()).map((f) => f.reason)).toEqual(Array(MAX_ATTEMPTS_PER_STEP).fill('remote unreachable'));
      expect((await types()).at(-1)).toBe('ScaffoldFailed');
      expect(seen).toEqual([]);
    });

    it('counts a crash between deliberate retries once', async () => {
      await inProcess(async () => Promise.reject(new StepError('remote unreachable', true))).handle(await delivery(1));
      await dies();
      expect(await inProcess(async () => infraPushed).handle(await delivery(3))).toEqual(ACK);
      expect(seen).toEqual(['crash infra-pass']);
      expect((await types()).at(-1)).toBe('InfraPushed');
    });

    it('counts no crash for a step handed back on shutdown that its process never finished', async () => {
      let finish!: (result: EventDraft) => void;
      const shuttingDown = inProcess(() => new Promise<EventDraft>((resolve) => (finish = resolve)));
      const abandoned = shuttingDown.handle(await delivery(1));
      while (!finish) await new Promise((r) => setTimeout(r, 5));
      await shuttingDown.handedBack();
      expect(await inProcess(async () => infraPushed).handle(await delivery(2))).toEqual(ACK);
      expect(seen).toEqual([]);
      finish(infraPushed);
      await abandoned;
      expect(await types()).toEqual(['ScaffoldRequested', 'InfraPushed']);
    });
  });
});
