import { randomUUID } from 'node:crypto';
import { ConcurrencyConflict, EventStore, handleCommand } from '#libs/event-store';
import { stamp } from '#libs/events';
import { runDecider } from '#libs/run-decider';
import { SCAFFOLD_REQUEST } from './run-fixtures';

export const requestedEvent = (runId: string, id: string = randomUUID()) =>
  stamp({ type: 'ScaffoldRequested', data: SCAFFOLD_REQUEST }, runId, id, new Date(), null);

/** The rules every EventStore keeps, run against the JetStream store and the in-memory one alike. */
export function eventStoreContract(store: () => EventStore) {
  it('refuses an append whose expected last sequence of the run is stale', async () => {
    const run = randomUUID();
    await store().append(run, [requestedEvent(run)], 0);
    await expect(store().append(run, [requestedEvent(run)], 0)).rejects.toBeInstanceOf(ConcurrencyConflict);
    expect((await store().readRun(run)).events).toHaveLength(1);
  });

  it('drops a duplicate event id', async () => {
    const run = randomUUID();
    const e = requestedEvent(run, `${run}-fixed`);
    const [first] = await store().append(run, [e], 0);
    await expect(store().append(run, [e], first.seq)).rejects.toBeInstanceOf(ConcurrencyConflict);
    expect((await store().readRun(run)).events).toHaveLength(1);
  });

  it('re-reads and decides again when writers race on one run', async () => {
    const run = randomUUID();
    await store().append(run, [requestedEvent(run)], 0);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        handleCommand(store(), runDecider, run, { type: 'RequestCancel', requestedBy: 'x' }),
      ),
    );
    expect(results.flatMap((r) => r.appended)).toHaveLength(1);
    expect((await store().readRun(run)).events.map((e) => e.type)).toEqual([
      'ScaffoldRequested',
      'ScaffoldCancelRequested',
    ]);
  });

  it('reads a run of many events in order, and ranges across runs by sequence and type', async () => {
    const run = randomUUID();
    let seq = 0;
    for (let i = 0; i < 300; i++) seq = (await store().append(run, [requestedEvent(run)], seq))[0].seq;
    const { events, lastSeq } = await store().readRun(run);
    expect(events).toHaveLength(300);
    expect(lastSeq).toBe(seq);
    expect(events.every((e, i) => i === 0 || e.seq > events[i - 1].seq)).toBe(true);
    const page = await store().readRange({ fromSeq: events[0].seq, limit: 10, runId: run });
    expect(page.events.map((e) => e.seq)).toEqual(events.slice(0, 10).map((e) => e.seq));
    expect(page.nextSeq).toBe(events[9].seq + 1);
    expect(
      (await store().readRange({ fromSeq: 1, limit: 5, types: ['ScaffoldCancelRequested'] })).events.every(
        (e) => e.type === 'ScaffoldCancelRequested',
      ),
    ).toBe(true);
    expect(await store().lastSeq()).toBe(seq);
  });

  it('scans a range of the whole log in order, in batches, through to its end and no further', async () => {
    const run = randomUUID();
    let seq = 0;
    for (let i = 0; i < 1500; i += 100)
      seq = (
        await store().append(
          run,
          Array.from({ length: 100 }, () => requestedEvent(run)),
          seq,
        )
      ).at(-1)!.seq;
    const first = seq - 1499;
    const batches: number[][] = [];
    const handed = await store().scan(
      { fromSeq: first, untilSeq: seq - 1 },
      async (events) => void batches.push(events.map((e) => e.seq)),
    );
    const seen = batches.flat();
    expect(handed).toBe(1499);
    expect(seen).toEqual(Array.from({ length: 1499 }, (_, i) => first + i));
    expect(batches.length).toBeGreaterThan(1);
    expect(await store().scan({ fromSeq: seq + 1 }, async () => undefined)).toBe(0);
  });

  it('follows a run live until the condition holds', async () => {
    const run = randomUUID();
    const [first] = await store().append(run, [requestedEvent(run)], 0);
    const seen: string[] = [];
    const following = store().follow({
      runId: run,
      onEvent: (e) => void seen.push(e.type),
      until: (e) => e.type === 'ScaffoldCancelRequested',
    });
    await handleCommand(store(), runDecider, run, { type: 'RequestCancel', requestedBy: 'x' });
    await following;
    expect(seen).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested']);
    expect(first.seq).toBeGreaterThan(0);
  });
}
