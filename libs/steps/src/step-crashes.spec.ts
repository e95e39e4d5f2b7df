import { InMemoryRunInputs } from '#libs/event-store';
import { parkedReason, RunInputStepCrashRecords, StepCrashGuard, startedRecord } from './step-crashes';

describe('startedRecord: a step left in flight by another process is one more crash, anything settled none', () => {
  it.each([
    ['no record (the first delivery)', null, 0],
    ['settled by another process (a retry, a hand-back)', { crashes: 1, in_flight: false, process: 'b' }, 1],
    ['left in flight by another process (it died at work)', { crashes: 1, in_flight: true, process: 'b' }, 2],
    [
      'left in flight by this process (a settle the store did not take)',
      { crashes: 1, in_flight: true, process: 'a' },
      1,
    ],
  ])('%s', (_, previous, crashes) => {
    expect(startedRecord(previous, 'a')).toEqual({ crashes, in_flight: true, process: 'a' });
  });
});

describe('StepCrashGuard over the run inputs', () => {
  const records = () => new RunInputStepCrashRecords(new InMemoryRunInputs());

  it('parks the step once MAX_STEP_CRASHES processes died with it at work, counting each of them once', async () => {
    const shared = records();
    const starts = [];
    // Each start in a new process whose predecessor never settled: what an OOM kill leaves behind.
    for (let process = 1; process <= 4; process++)
      starts.push(await new StepCrashGuard(shared, 3, `p${process}`).started('run', 'infra-pass'));
    expect(starts).toEqual([
      { crashes: 0, crashFound: false, parked: false },
      { crashes: 1, crashFound: true, parked: false },
      { crashes: 2, crashFound: true, parked: false },
      { crashes: 3, crashFound: true, parked: true },
    ]);
  });

  it('counts no crash for deliveries settled by their process, whichever process takes the next one', async () => {
    const shared = records();
    for (let process = 1; process <= 5; process++) {
      const guard = new StepCrashGuard(shared, 1, `p${process}`);
      expect(await guard.started('run', 'infra-pass')).toEqual({ crashes: 0, crashFound: false, parked: false });
      await guard.settled('run', 'infra-pass', 0);
    }
  });

  it("keeps each run's step apart", async () => {
    const shared = records();
    await new StepCrashGuard(shared, 1, 'p1').started('run', 'infra-pass');
    const next = new StepCrashGuard(shared, 1, 'p2');
    expect((await next.started('run', 'full-pass')).crashes).toBe(0);
    expect((await next.started('other-run', 'infra-pass')).crashes).toBe(0);
    expect((await next.started('run', 'infra-pass')).crashes).toBe(1);
  });

  it('says how often, and nothing else', () => {
    expect(parkedReason(3)).toBe('the step crashed the service 3 times; parked');
    expect(parkedReason(1)).toBe('the step crashed the service 1 time; parked');
  });
});
