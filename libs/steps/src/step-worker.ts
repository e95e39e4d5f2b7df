import { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { JetStreamEventStore } from '../../event-store/src';
import { runSubject } from '../../event-store/src';
import { parseEvent, Step, StoredEvent } from '../../events/src';
import { decide, triggers } from '../../run-decider/src';
import { crashPoint } from './crash-points';
import { RunLog } from './run-log';
import type { StepSettings } from './settings';
import { StepHandler, TargetClusters, toStepError } from './step-handlers';

export interface WorkerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const durableNameFor = (step: string, runId?: string) => (runId ? `step-${step}-run-${runId}` : `step-${step}`);

/** Backoff before a failed step is tried again: 1 s, 2 s, 4 s ... capped at 30 s. */
export const retryDelayMs = (attempt: number) => Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1));

/**
 * One durable pull consumer per step. It reacts to the step's trigger event, acks every other event
 * at once, keeps long steps alive with working(), and records the outcome through the decider,
 * so a redelivered or late event never runs a step twice.
 */
export class StepWorker {
  private messages?: ConsumerMessages;
  private inFlight = new Set<Promise<void>>();
  /** Runs whose step is being worked on in this process: a redelivery meanwhile waits its turn. */
  private activeRuns = new Set<string>();
  private loop?: Promise<void>;

  constructor(
    private readonly store: JetStreamEventStore,
    private readonly handler: StepHandler,
    private readonly settings: StepSettings,
    private readonly logger: WorkerLogger,
    private readonly onlyRunId?: string,
    private readonly targets?: TargetClusters,
    /** Observes each attempt (metrics). */
    private readonly onAttempt?: (step: string, outcome: 'succeeded' | 'failed', seconds: number) => void,
  ) {}

  get durableName() {
    return durableNameFor(this.handler.step, this.onlyRunId);
  }

  private stopped = false;

  async start(): Promise<void> {
    const consumer = await this.ensureConsumer();
    this.loop = this.pump(consumer);
  }

  private ensureConsumer(): Promise<Consumer> {
    return this.store.durableConsumer(this.durableName, {
      filterSubject: this.onlyRunId ? runSubject(this.onlyRunId) : 'scaffold.run.>',
      ackWaitMs: this.settings.ackWaitMs,
      maxAckPending: Math.max(this.settings.concurrency * 4, 16),
    });
  }

  /**
   * Pulls only as many messages as there are free slots: a message never waits in a client buffer
   * without keep-alives, where its ack wait could run out and hand it to another replica meanwhile.
   */
  private async pump(consumer: Consumer) {
    while (!this.stopped) {
      while (this.inFlight.size >= this.settings.concurrency) await Promise.race(this.inFlight);
      const free = this.settings.concurrency - this.inFlight.size;
      try {
        this.messages = await consumer.fetch({ max_messages: free, expires: 5000 });
        for await (const msg of this.messages) {
          const work = this.handle(msg).catch((e) => this.logger.error({ err: String(e), step: this.handler.step }, 'step handling failed'));
          this.inFlight.add(work);
          void work.finally(() => this.inFlight.delete(work));
        }
      } catch (e) {
        if (this.stopped) break;
        this.logger.warn({ err: String(e), step: this.handler.step }, 'fetch failed; retrying');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.messages?.close().catch(() => undefined);
    await this.loop?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }

  private async handle(msg: JsMsg): Promise<void> {
    let event;
    try {
      event = parseEvent(msg.string(), msg.seq);
    } catch (e) {
      this.logger.warn({ seq: msg.seq }, 'skipping a message that is not a scaffold event');
      msg.ack();
      return;
    }
    if (!triggers(event, this.handler.step)) {
      msg.ack();
      return;
    }
    const step = this.handler.step;
    const runId = event.run_id;
    if (this.activeRuns.has(runId)) {
      msg.nak(this.settings.ackWaitMs);
      return;
    }
    this.activeRuns.add(runId);
    try {
      await this.runStep(msg, event, step, runId);
    } finally {
      this.activeRuns.delete(runId);
    }
  }

  private async runStep(msg: JsMsg, event: StoredEvent, step: Step, runId: string): Promise<void> {
    const ids = { run_id: runId, event_id: event.id, step };
    // At the step boundary: a cancelled run stops here; a run already past this step is not run again.
    const gate = await this.store.decideAndAppend(runId, (s) => decide({ type: 'StopIfCancelled', step }, s), { causationId: event.id });
    if (gate.appended.length > 0 || gate.state.step !== step || ['succeeded', 'failed', 'cancelled'].includes(gate.state.status)) {
      msg.ack();
      return;
    }
    const log = new RunLog(this.store, runId, step);
    const keepAlive = setInterval(() => msg.working(), Math.max(1000, Math.floor(this.settings.ackWaitMs / 3)));
    const started = Date.now();
    try {
      this.logger.info(ids, 'step started');
      await log.line(`${step} started (delivery ${msg.info.deliveryCount})`);
      const deadline = this.handler.deadlineMs?.(this.settings) ?? this.settings.stepTimeoutMs;
      const ctx = { runId, state: gate.state, store: this.store, settings: this.settings, log, targets: this.targets };
      crashPoint(`before-step:${step}`);
      const result = await withDeadline(this.handler.run(ctx), deadline, step);
      const done = await this.store.decideAndAppend(runId, (s) => decide({ type: 'CompleteStep', step, result }, s), { causationId: event.id });
      this.logger.info({ ...ids, appended: done.appended.map((e) => e.type) }, 'step finished');
      this.onAttempt?.(step, 'succeeded', (Date.now() - started) / 1000);
      crashPoint(`after-append:${step}`);
      msg.ack();
    } catch (e) {
      const failure = toStepError(e);
      this.onAttempt?.(step, 'failed', (Date.now() - started) / 1000);
      await log.line(`${step} failed: ${failure.message}`, 'error');
      const failed = await this.store.decideAndAppend(runId, (s) => decide({ type: 'FailStep', step, reason: failure.message, retryable: failure.retryable }, s), { causationId: event.id });
      const stepFailed = failed.appended.find((a) => a.type === 'StepFailed');
      this.logger.warn({ ...ids, reason: failure.message, retry: stepFailed?.type === 'StepFailed' && stepFailed.data.will_retry }, 'step failed');
      if (stepFailed?.type === 'StepFailed' && stepFailed.data.will_retry) msg.nak(retryDelayMs(stepFailed.data.attempt));
      else msg.ack();
    } finally {
      clearInterval(keepAlive);
    }
  }
}

function withDeadline<T>(work: Promise<T>, ms: number, step: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${step} passed its deadline of ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
