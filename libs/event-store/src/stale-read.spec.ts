import { randomUUID } from 'node:crypto';
import { RunCommands, runDecider } from '#libs/run-decider';
import { LOCAL_STEP_HANDLERS, StepProcessor } from '#libs/steps';
import { SCAFFOLD_REQUEST } from '../../../test/support/run-fixtures';
import { handleCommand } from './command-handler';
import { StaleRead } from './event-store';
import { InMemoryEventStore } from './in-memory-event-store';
import { InMemoryRunInputs } from './run-inputs';
import { InMemoryRunLogStore } from './run-log-store';

/** A store whose next read of a run answers as a stream leader that has not applied the newest event yet. */
class BehindOnce extends InMemoryEventStore {
  behind = 0;
  async readRun(runId: string) {
    const read = await super.readRun(runId);
    if (this.behind === 0) return read;
    this.behind--;
    const events = read.events.slice(0, -1);
    return { events, lastSeq: events.at(-1)?.seq ?? 0 };
  }
}

/** The stale read stops the pass before its clone: a clone would be a test error. */
const noClones = {
  clone: () => Promise.reject(new Error('no clone expected')),
  withScratchClone: () => Promise.reject(new Error('no clone expected')),
  handOver: () => Promise.reject(new Error('no clone expected')),
  takeOver: () => Promise.reject(new Error('no clone expected')),
  withoutLocalPaths: (text: string) => text,
};

describe('a read that is behind an event already delivered', () => {
  it('handleCommand refuses to decide on it when told the sequence the caller has seen', async () => {
    const store = new BehindOnce();
    const runId = randomUUID();
    const [requested] = (
      await handleCommand(store, runDecider, runId, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST })
    ).appended;
    store.behind = 1;
    await expect(
      handleCommand(
        store,
        runDecider,
        runId,
        { type: 'RequestCancel', requestedBy: 'ops' },
        { seenSeq: requested.seq },
      ),
    ).rejects.toThrow(StaleRead);
    // Read again: the event is there, the decision is made.
    expect(
      (
        await handleCommand(
          store,
          runDecider,
          runId,
          { type: 'RequestCancel', requestedBy: 'ops' },
          { seenSeq: requested.seq },
        )
      ).appended,
    ).toHaveLength(1);
  });

  it('a step worker does not acknowledge its trigger as "already done" on a stale read: the delivery comes back', async () => {
    const store = new BehindOnce();
    const runId = randomUUID();
    const [requested] = (
      await handleCommand(store, runDecider, runId, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST })
    ).appended;
    const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const infra = new StepProcessor(LOCAL_STEP_HANDLERS[0], {
      commands: new RunCommands(store),
      inputs: new InMemoryRunInputs(),
      logs: new InMemoryRunLogStore(),
      settings: { ackWaitMs: 1000 } as any,
      logger: silent,
      workspaces: noClones,
    });
    store.behind = 1;
    await expect(infra.handle([{ event: requested, deliveryCount: 1 }])).rejects.toThrow(StaleRead);
  });
});
