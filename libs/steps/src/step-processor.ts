import type { ForgeResolver } from '#libs/delivery/forge-port';
import type { Delivery, Disposition, ProcessorOptions, RunInputs, RunLogStore } from '#libs/event-store';
import { ACK, ALL_RUNS, isStoreUnavailable, nakAfter, retryDelayMs } from '#libs/event-store';
import { durableNameFor } from '#libs/events';
import type { Step, StoredEvent } from '#libs/events';
import { isTerminal, RunCommandPort, RunState, runPlanOf, triggers } from '#libs/run-decider';
import { IN_PROCESS_GENERATOR, TreeGenerator } from '#libs/generator';
import type { GitWorkspaces } from '#libs/git';
import { crashPoint } from './handler/crash-points';
import type { SuppliedCredentialsSource, TargetClusters } from './handler/ports';
import { RunLog } from './handler/run-log';
import type { StepSettings } from './handler/settings';
import { StepHandler, toStepError } from './handler/step-handler';
import { parkedReason, StepCrashGuard, StepStart } from './step-crashes';
import { stepDeadlineMs } from './step-registry';
import { printableText } from '#libs/validation';

export interface StepLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What a step processor works with: the run's commands, inputs and log, and where the step may reach. */
export interface StepDependencies {
  commands: RunCommandPort;
  inputs: RunInputs;
  logs: RunLogStore;
  settings: StepSettings;
  logger: StepLogger;
  targets?: TargetClusters;
  credentials?: SuppliedCredentialsSource;
  /** The forges of merge-request delivery (absent: no forge configured). */
  forges?: ForgeResolver;
  /** Where passes are generated (default: on this thread). */
  generator?: TreeGenerator;
  /** Where passes get their working copies. */
  workspaces: GitWorkspaces;
  /** Observes how long after its triggering event was appended a step began its work (first deliveries; metrics). */
  onHandoff?: (step: string, seconds: number) => void;
  /** Observes each attempt (metrics). */
  onAttempt?: (step: string, outcome: 'succeeded' | 'failed', seconds: number) => void;
  /** Counts the crashes of each run's step and parks a step that keeps killing the process (the service; not the runner, whose Job has its own limit). */
  crashes?: StepCrashGuard;
  /** Observes a step found to have been at work when its process died (metrics). */
  onCrashFound?: (step: string) => void;
  /** Observes a step parked: failed for crashing the process MAX_STEP_CRASHES times (metrics). */
  onParked?: (step: string) => void;
}

/** A step's durable consumer in the service: `step-<step>`, shared by every replica (from the run plan). */
export { durableNameFor };

/** The consumer a step's processor pulls from: every run's events. */
export function stepConsumer(step: Step, settings: StepSettings): ProcessorOptions {
  return {
    durable: durableNameFor(step),
    filterSubject: ALL_RUNS,
    ackWaitMs: settings.ackWaitMs,
    concurrency: settings.concurrency,
  };
}

/**
 * One step's reaction to its trigger event: every other event is acknowledged at once; the outcome
 * is recorded through the decider, so a redelivered or late event never runs a step twice.
 */
/** A failover takes seconds: a step the store did not answer for is tried again within this, not after 30 s. */
const STORE_RETRY_MAX_MS = 5000;

export class StepProcessor {
  /** Runs whose step is being worked on in this process: a redelivery meanwhile waits its turn. */
  private readonly activeRuns = new Set<string>();
  /** Runs whose step this process has put in flight in the crash records, with the crashes counted so far. */
  private readonly inFlight = new Map<string, number>();
  private readonly commands: RunCommandPort;

  constructor(
    readonly handler: StepHandler,
    private readonly deps: StepDependencies,
  ) {
    this.commands = deps.commands;
  }

  handle = async ([delivery]: Delivery[]): Promise<Disposition> => {
    const { event } = delivery;
    if (!triggers(event, this.handler.step)) return ACK;
    if (this.activeRuns.has(event.run_id)) return nakAfter(this.deps.settings.ackWaitMs);
    this.activeRuns.add(event.run_id);
    try {
      return await this.runStep(event, delivery.deliveryCount);
    } finally {
      this.activeRuns.delete(event.run_id);
    }
  };

  private async runStep(event: StoredEvent, deliveryCount: number): Promise<Disposition> {
    const { logger } = this.deps;
    const step: Step = this.handler.step;
    const runId = event.run_id;
    const ids = { run_id: runId, event_id: event.id, step };
    // At the step boundary: a cancelled run stops here; a run already past this step is not run again.
    const gate = await this.commands.handle(
      runId,
      { type: 'StopIfCancelled', step },
      { causationId: event.id, seenSeq: event.seq },
    );
    const skipped = (reason: string) => {
      // At debug (every run's full pass skips the infra pass's InfraPushed this way): a re-drive that changes nothing says why.
      logger.debug({ ...ids, seq: event.seq, run_step: gate.state.step, last_seq: gate.history.at(-1)?.seq }, reason);
      return ACK;
    };
    if (gate.appended.length > 0) return skipped('trigger not run: the run was cancelled at this step');
    if (gate.state.step !== step || isTerminal(gate.state))
      return skipped('trigger not run: the run is not at this step');
    // A step with two triggers (the full pass: CertFetched, or InfraPushed on SOPS runs) runs for the later one only:
    // an earlier trigger delivered late, after the later one, must not start the step a second time beside it.
    // The run's own plan says what starts the step: a run finishes on the plan it started with.
    const plan = runPlanOf(gate.state);
    const latestTrigger = gate.history.filter((e) => triggers(e, step, plan)).at(-1);
    if (latestTrigger && latestTrigger.seq !== event.seq)
      return skipped(`trigger not run: a later trigger (sequence ${latestTrigger.seq}) runs the step`);
    const log = new RunLog(this.deps.logs, runId, step);
    const start = await this.putInFlight(runId);
    try {
      if (start.parked) return await this.park(event, start.crashes, log);
      return await this.work(event, gate.state, deliveryCount, log);
    } finally {
      await this.settleInFlight(runId);
    }
  }

  /** Records the step in flight before its work can take the process down; says whether it crashed too often to run. */
  private async putInFlight(runId: string): Promise<StepStart> {
    const guard = this.deps.crashes;
    if (!guard) return { crashes: 0, crashFound: false, parked: false };
    const step = this.handler.step;
    const start = await guard.started(runId, step);
    this.inFlight.set(runId, start.crashes);
    if (start.crashFound) {
      this.deps.onCrashFound?.(step);
      this.deps.logger.warn(
        { run_id: runId, step, crashes: start.crashes, max_step_crashes: guard.maxCrashes },
        'the step was at work when its process died',
      );
    }
    return start;
  }

  /** This process settles the delivery itself (an ack or a nak, never a crash): the record leaves flight. */
  private async settleInFlight(runId: string): Promise<void> {
    const crashes = this.inFlight.get(runId);
    if (crashes === undefined || !this.deps.crashes) return;
    this.inFlight.delete(runId);
    // Not written (a store outage): the record names this process, so a delivery here still counts no crash.
    await this.deps.crashes
      .settled(runId, this.handler.step, crashes)
      .catch((e) => this.deps.logger.warn({ run_id: runId, err: String(e) }, 'could not settle the crash record'));
  }

  /**
   * On shutdown, after the consumer handed its unfinished deliveries back to the stream: they were given back,
   * not lost with the process, so their next delivery counts no crash even if this process never gets to settle them.
   */
  async handedBack(): Promise<void> {
    await Promise.all([...this.inFlight.keys()].map((runId) => this.settleInFlight(runId)));
  }

  /** The step crashed the process MAX_STEP_CRASHES times: it fails for good, with a reason, instead of running again. */
  private async park(event: StoredEvent, crashes: number, log: RunLog): Promise<Disposition> {
    const step = this.handler.step;
    const reason = parkedReason(crashes);
    await log.line(`${step} not run: ${reason}`, 'error');
    await this.commands.handle(
      event.run_id,
      { type: 'FailStep', step, reason, retryable: false },
      { causationId: event.id, seenSeq: event.seq },
    );
    this.deps.logger.error({ run_id: event.run_id, event_id: event.id, step, crashes }, 'step parked');
    this.deps.onParked?.(step);
    return ACK;
  }

  private async work(event: StoredEvent, state: RunState, deliveryCount: number, log: RunLog): Promise<Disposition> {
    const { settings, logger } = this.deps;
    const step: Step = this.handler.step;
    const runId = event.run_id;
    const ids = { run_id: runId, event_id: event.id, step };
    const started = Date.now();
    // Redeliveries carry the retry pause: only a first delivery says how quickly steps hand off.
    if (deliveryCount === 1) this.deps.onHandoff?.(step, Math.max(0, started - Date.parse(event.time)) / 1000);
    try {
      logger.info(ids, 'step started');
      await log.line(`${step} started (delivery ${deliveryCount})`);
      const deadline = stepDeadlineMs(step, settings);
      const stop = new AbortController();
      const ctx = {
        runId,
        state,
        commands: this.commands,
        inputs: this.deps.inputs,
        settings,
        log,
        targets: this.deps.targets,
        credentials: this.deps.credentials,
        forges: this.deps.forges,
        generator: this.deps.generator ?? IN_PROCESS_GENERATOR,
        workspaces: this.deps.workspaces,
        signal: stop.signal,
      };
      crashPoint(`before-step:${step}`);
      const result = await withDeadline(this.handler.run(ctx), deadline, step, stop);
      const done = await this.commands.handle(
        runId,
        { type: 'CompleteStep', step, result },
        { causationId: event.id, seenSeq: event.seq },
      );
      logger.info({ ...ids, appended: done.appended.map((e) => e.type) }, 'step finished');
      this.deps.onAttempt?.(step, 'succeeded', (Date.now() - started) / 1000);
      crashPoint(`after-append:${step}`);
      return ACK;
    } catch (e) {
      // The store out of reach (a failover): the step runs again once it answers, no attempt of the run's counted.
      if (isStoreUnavailable(e)) {
        logger.warn({ ...ids, err: String(e) }, 'the event store did not answer; the step runs again when it does');
        return nakAfter(Math.min(retryDelayMs(deliveryCount), STORE_RETRY_MAX_MS));
      }
      const failure = toStepError(e);
      // The reason is shown in answers, consoles and terminals: a remote's or a repository's text must not carry escapes.
      failure.message = printableText(this.deps.workspaces.withoutLocalPaths(failure.message));
      this.deps.onAttempt?.(step, 'failed', (Date.now() - started) / 1000);
      await log.line(`${step} failed: ${failure.message}`, 'error');
      const failed = await this.commands.handle(
        runId,
        { type: 'FailStep', step, reason: failure.message, retryable: failure.retryable },
        { causationId: event.id, seenSeq: event.seq },
      );
      const stepFailed = failed.appended.find((a) => a.type === 'StepFailed');
      const retry = stepFailed?.type === 'StepFailed' && stepFailed.data.will_retry;
      logger.warn({ ...ids, reason: failure.message, retry }, 'step failed');
      return retry && stepFailed?.type === 'StepFailed' ? nakAfter(retryDelayMs(stepFailed.data.attempt)) : ACK;
    }
  }
}

/** The step's work, or its failure at the deadline; `stop` is then aborted, so the work does not go on behind the failure. */
function withDeadline<T>(work: Promise<T>, ms: number, step: string, stop: AbortController): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const passed = new Error(`${step} passed its deadline of ${Math.round(ms / 1000)} s`);
      reject(passed);
      stop.abort(passed);
    }, ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
