import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { InMemoryRunInputs, InMemoryRunLogStore, JetStreamEventStore, StreamAdmin } from '#libs/event-store';
import { currentPlan, deployRunPlan, EventDraft, keptPlans, StoredEvent } from '#libs/events';
import type { GitWorkspaces } from '#libs/git';
import { fold, RunCommands } from '#libs/run-decider';
import { handlersFor, StepHandler, StepProcessor, StepSettings } from '#libs/steps';
import { SCAFFOLD_REQUEST, STEP_RESULTS, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { TestNats } from '../support/services';
import { fluxReadyWait } from './flux-ready-wait/handler';
import { SCAFFOLD_V2 } from './scaffold-v2';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const result = (step: string, draft: EventDraft): StepHandler<string> => ({ step, run: async () => draft });
/** Steps that do no work: each appends its result, so the test sees only the run's path through its plan. */
const HANDLERS = {
  'infra-pass': result('infra-pass', { type: 'InfraPushed', data: { commit: 'a'.repeat(40), files_changed: 1 } }),
  'sealed-secrets-wait': result('sealed-secrets-wait', {
    type: 'SealedSecretsReady',
    data: { source: 'given_certificate', controller: null },
  }),
  'cert-fetch': result('cert-fetch', {
    type: 'CertFetched',
    data: { fingerprint_sha256: 'ab', not_after: '2030-01-01T00:00:00.000Z' },
  }),
  'full-pass': result('full-pass', { type: 'FullPushed', data: { commit: 'b'.repeat(40), objects_sealed: 2 } }),
  'flux-ready-wait': fluxReadyWait,
  // The merge-request plan's steps (kept too; no run here takes them).
  ...Object.fromEntries(
    (['infra-request', 'infra-merge', 'full-request', 'full-merge'] as const).map((s) => [
      s,
      result(s, STEP_RESULTS[s]),
    ]),
  ),
};

/**
 * A deploy that adds a step while a run is in flight: the run started on plan v1 finishes on v1's steps, a run
 * started after the deploy goes through v2's. On real JetStream, as the service's step processors see it.
 */
describe('a run finishes on the plan it started with (real nats-server)', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let store: JetStreamEventStore;
  const inputs = new InMemoryRunInputs();
  const logs = new InMemoryRunLogStore();

  beforeAll(async () => {
    nats = await TestNats.start();
    nc = await connect({ servers: nats.url });
    await new StreamAdmin(nc).apply(1);
    store = await JetStreamEventStore.open(nc);
  });
  afterAll(async () => {
    await nc.close();
    await nats.destroy();
  });

  /** The processors of a service deployed with the plans kept now: one per step, each with its handler. */
  const deploy = () => {
    const deps = {
      commands: new RunCommands(store),
      inputs,
      logs,
      logger: silent,
      settings: { stepTimeoutMs: 10_000, ackWaitMs: 1000, sealedSecretsDeadlineMs: 10_000 } as StepSettings,
      workspaces: { withoutLocalPaths: (s: string) => s } as unknown as GitWorkspaces,
    };
    return handlersFor(keptPlans(), HANDLERS).map((h) => new StepProcessor(h, deps));
  };

  /** Hands every event of the run not seen yet to every processor (as their durable consumers deliver them), `rounds` times. */
  const advance = async (runId: string, processors: StepProcessor[], seen: Set<number>, rounds = 10) => {
    for (let i = 0; i < rounds; i++)
      for (const event of (await store.readRun(runId)).events.filter((e) => !seen.has(e.seq))) {
        seen.add(event.seq);
        for (const p of processors) await p.handle([{ event, deliveryCount: 1 }]);
      }
    return (await store.readRun(runId)).events;
  };
  const path = (events: StoredEvent[]) => events.map((e) => e.type);

  it('starts on v1, v2 is deployed with an extra step, and the run ends on v1 steps; a new run takes v2', async () => {
    expect(currentPlan().version).toBe(1);
    const v1 = deploy();
    const early = randomUUID();
    await new RunCommands(store).handle(early, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST });
    const seenEarly = new Set<number>();
    // The v1 service runs the infrastructure pass and the wait, then is replaced.
    await advance(early, v1, seenEarly, 1);
    await advance(early, v1, seenEarly, 1);
    expect(fold((await store.readRun(early)).events).step).toBe('cert-fetch');

    deployRunPlan(SCAFFOLD_V2);
    expect(currentPlan().version).toBe(2);
    const v2 = deploy();
    expect(v2.map((p) => p.handler.step)).toContain('flux-ready-wait');
    const events = await advance(early, v2, seenEarly);
    expect(path(events)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(events[0].data).toMatchObject({ plan: { kind: 'scaffold', version: 1 } });
    expect(fold(events).status).toBe('succeeded');

    const late = randomUUID();
    await new RunCommands(store).handle(late, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST });
    const lateEvents = await advance(late, v2, new Set());
    expect(path(lateEvents)).toEqual([
      'ScaffoldRequested',
      'InfraPushed',
      'SealedSecretsReady',
      'CertFetched',
      'StepCompleted',
      'FullPushed',
      'ScaffoldSucceeded',
    ]);
    expect(lateEvents[0].data).toMatchObject({ plan: { kind: 'scaffold', version: 2 } });
    expect(lateEvents[4].data).toEqual({
      step: 'flux-ready-wait',
      summary: 'Kustomization infrastructure Ready at aaaaaaaaaaaa',
    });
  });

  it('a run recorded before plans (ScaffoldRequested v1, no plan) is read as plan v1', async () => {
    const old = randomUUID();
    const requested = {
      type: 'ScaffoldRequested' as const,
      data: SCAFFOLD_REQUEST,
      id: randomUUID(),
      schema_version: 1,
      run_id: old,
      time: new Date().toISOString(),
      causation_id: null,
    };
    await store.append(old, [requested], 0);
    // Read back from the stream (a store that did not append it): upcast to version 2, naming plan v1.
    const stored = (await (await JetStreamEventStore.open(nc)).readRun(old)).events[0];
    expect(stored).toMatchObject({ schema_version: 2, data: { plan: { kind: 'scaffold', version: 1 } } });
    const events = await advance(old, deploy(), new Set());
    expect(path(events)).not.toContain('StepCompleted');
    expect(fold(events).status).toBe('succeeded');
  });
});
