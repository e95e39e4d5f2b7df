import { randomUUID } from 'node:crypto';
import { EventStore, FollowOptions, handleCommand, InMemoryEventStore } from '#libs/event-store';
import { fold, runDecider } from '#libs/run-decider';
import { SCAFFOLD_REQUEST, STEP_RESULTS } from '../../test/support/run-fixtures';
import { LIVE_RUNS_MAX, LiveRuns } from './live-runs';

const request = (store: EventStore, runId = randomUUID()) =>
  handleCommand(store, runDecider, runId, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST }).then(() => runId);
const completeInfra = (store: EventStore, runId: string) =>
  handleCommand(store, runDecider, runId, {
    type: 'CompleteStep',
    step: 'infra-pass',
    result: STEP_RESULTS['infra-pass'],
  });
/** Until the follow has handed over everything appended (the in-memory log hands over on the next turn). */
const settled = () => new Promise((r) => setImmediate(r));

/** A log whose first follow is cut (as a NATS connection drops) when the test says; later follows go on. */
class FollowInterruptedOnce extends InMemoryEventStore {
  private follows = 0;
  interrupt: (e: Error) => void = () => undefined;

  override follow(opts: FollowOptions): Promise<void> {
    if (++this.follows > 1) return super.follow(opts);
    const cut = new AbortController();
    return new Promise((_, reject) => {
      this.interrupt = (e) => {
        cut.abort();
        reject(e);
      };
      void super.follow({ ...opts, signal: cut.signal });
    });
  }
}

describe('LiveRuns: the runs a replica followed from their start, for GET answers without the read-model', () => {
  let live: LiveRuns | undefined;
  afterEach(() => live?.onModuleDestroy());

  it("keeps a run begun after the follow started, as its whole history folds; a run begun before is the read-model's", async () => {
    const store = new InMemoryEventStore();
    const before = await request(store);
    live = new LiveRuns(store);
    live.onApplicationBootstrap();
    await settled();
    const after = await request(store);
    await completeInfra(store, after);
    await completeInfra(store, before);
    await settled();
    expect(live.state(after)).toEqual(fold((await store.readRun(after)).events));
    expect(live.state(after)).toMatchObject({ status: 'running', infraCommit: expect.any(String) });
    expect(live.state(before)).toBeUndefined();
  });

  it('keeps at most LIVE_RUNS_MAX runs, dropping the one changed longest ago', async () => {
    const store = new InMemoryEventStore();
    live = new LiveRuns(store);
    const ids = await Promise.all(Array.from({ length: LIVE_RUNS_MAX + 1 }, () => request(store)));
    const requested = (await store.readRange({ limit: 10 * LIVE_RUNS_MAX })).events;
    // The first run changes again before the last one begins: the second is then the one changed longest ago.
    await completeInfra(store, ids[0]);
    const [, infraPushed] = (await store.readRun(ids[0])).events;
    for (const e of [...requested.slice(0, LIVE_RUNS_MAX), infraPushed, requested[LIVE_RUNS_MAX]]) live.apply(e);
    expect(live.state(ids[0])).toMatchObject({ status: 'running' });
    expect(live.state(ids[1])).toBeUndefined();
    expect(live.state(ids[LIVE_RUNS_MAX])).toMatchObject({ status: 'queued' });
  });

  it('keeps nothing from before an interrupted follow: a run it may have missed events of is read elsewhere', async () => {
    const store = new FollowInterruptedOnce();
    live = new LiveRuns(store);
    live.onApplicationBootstrap();
    await settled();
    const missed = await request(store);
    await settled();
    expect(live.state(missed)).toMatchObject({ status: 'queued' });
    store.interrupt(new Error('NATS connection closed'));
    await settled();
    expect(live.state(missed)).toBeUndefined();
  });
});
