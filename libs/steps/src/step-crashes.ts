import { randomUUID } from 'node:crypto';
import type { RunInputs } from '#libs/event-store';
import type { Step } from '#libs/events';

/**
 * Poison steps. A step that kills its process (a planted file read whole until the pod's memory limit) would be
 * redelivered after every restart and kill the service again, for ever. JetStream's delivery count cannot tell such a
 * crash from a deliberate retry (a nak after a retryable failure) or a hand-back on shutdown, so each step of a run
 * keeps a durable record: put in flight, naming the process, before the step's work starts, and settled whenever the
 * process settles the delivery itself. A record still in flight under another process's name was left by a process
 * that died at work: one crash.
 */
export interface StepCrashRecord {
  /** How many deliveries of this run's step were in flight when their process died. */
  crashes: number;
  in_flight: boolean;
  /** The process that put it in flight (an id per process start, never reused). */
  process: string;
}

/** Where the records are kept, one per run and step, durably (it must outlive the process it counts). */
export interface StepCrashRecords {
  read(runId: string, step: Step): Promise<StepCrashRecord | null>;
  write(runId: string, step: Step, record: StepCrashRecord): Promise<void>;
}

/**
 * The record of a step about to run in `process`, from the step's previous record: one more crash when an earlier
 * delivery was left in flight by another process. (Left by this very process, it was settled in a way that could not
 * be written, a store outage: this process is alive, so that was no crash.)
 */
export function startedRecord(previous: StepCrashRecord | null, process: string): StepCrashRecord {
  const leftByADeadProcess = previous?.in_flight === true && previous.process !== process;
  return { crashes: (previous?.crashes ?? 0) + (leftByADeadProcess ? 1 : 0), in_flight: true, process };
}

/** Why a parked step failed: how often, nothing of the run's input. */
export const parkedReason = (crashes: number) =>
  `the step crashed the service ${crashes} time${crashes === 1 ? '' : 's'}; parked`;

/** What the step processor learns before it runs a step. */
export interface StepStart {
  crashes: number;
  /** This start found one more crash than the last. */
  crashFound: boolean;
  /** MAX_STEP_CRASHES reached: the step is failed instead of run. */
  parked: boolean;
}

/** Counts each run's step's crashes in durable records and parks a step that reached `maxCrashes` (MAX_STEP_CRASHES). */
export class StepCrashGuard {
  constructor(
    private readonly records: StepCrashRecords,
    readonly maxCrashes: number,
    /** This process, as the records name it. */
    readonly process: string = randomUUID(),
  ) {}

  /** Before a step's work starts (and before the step may take the process down): put in flight, durably. */
  async started(runId: string, step: Step): Promise<StepStart> {
    const previous = await this.records.read(runId, step);
    const record = startedRecord(previous, this.process);
    await this.records.write(runId, step, record);
    return {
      crashes: record.crashes,
      crashFound: record.crashes > (previous?.crashes ?? 0),
      parked: record.crashes >= this.maxCrashes,
    };
  }

  /** The process settled the delivery itself (done, failed, retried, parked or handed back): no crash to count. */
  settled(runId: string, step: Step, crashes: number): Promise<void> {
    return this.records.write(runId, step, { crashes, in_flight: false, process: this.process });
  }
}

/**
 * The records on the run inputs stream (`scaffold.input.<id>.step-crashes.<step>`, the latest kept per subject, with
 * the run's other inputs): written by the service only, with nothing of the step's input.
 */
export class RunInputStepCrashRecords implements StepCrashRecords {
  constructor(private readonly inputs: RunInputs) {}

  async read(runId: string, step: Step): Promise<StepCrashRecord | null> {
    const value = await this.inputs.get(runId, recordName(step));
    return value === null ? null : (JSON.parse(value) as StepCrashRecord);
  }

  write(runId: string, step: Step, record: StepCrashRecord): Promise<void> {
    return this.inputs.put(runId, recordName(step), JSON.stringify(record));
  }
}

const recordName = (step: Step) => `step-crashes.${step}`;
