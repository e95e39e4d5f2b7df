import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import Ajv, { ValidateFunction } from 'ajv';
import { EventStore, handleCommand, RunInputs, RunLogStore, StaleRead } from '#libs/event-store';
import {
  allSteps,
  checkEventData,
  isEventType,
  isRunId,
  keptPlans,
  plansGeneration,
  Step,
  StoredEvent,
} from '#libs/events';
import { Command, fold, isTerminal, runDecider, runPlanOf } from '#libs/run-decider';
import { parseSealingCertificate } from '#libs/sealing';
import { redact, SEALING_CERT_INPUT } from '#libs/steps';
import { ApiError, invalid } from '../common/api-error';
import { withoutNul } from '../common/without-nul';
import { printableText } from '#libs/validation';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { EVENT_STORE, RUN_INPUTS, RUN_LOGS } from '../event-store/event-store.module';
import { RUN_ENDED } from './contract';

/**
 * The inputs a runner may read, and the step during which it may write each (the certificate it fetched): what the
 * run plans let a runner write for each step.
 */
export function runnerInputs(): Record<string, Step> {
  const inputs: Record<string, Step> = {};
  for (const plan of keptPlans())
    for (const s of plan.steps) for (const name of s.runner.writesInputs) inputs[name] = s.name as Step;
  return inputs;
}
const RUNNER_INPUTS = runnerInputs();
if (!Object.hasOwn(RUNNER_INPUTS, SEALING_CERT_INPUT))
  throw new Error('no step of the run plans writes the certificate');
const MAX_CERTIFICATE_BYTES = 16 * 1024;
const MAX_LOG_ENTRIES = 50;
/** Progress a step may record: the wait reports what it sees when that changes; more than this is noise. */
const MAX_PROGRESS_PER_STEP = 200;

/**
 * POST /api/runner/v1/runs/{id}/commands: what a runner may record, only for a step of its own run. The steps a
 * runner may report for: every step of the kept run plans (built again when a plan is deployed).
 */
export const reportSchema = (steps: readonly string[] = allSteps()) => {
  const step = { enum: [...steps] };
  const commandOf = (type: string, required: string[], properties: object) => ({
    type: 'object',
    additionalProperties: false,
    required: ['type', 'step', ...required],
    properties: { type: { const: type }, step, ...properties },
  });
  return {
    type: 'object',
    additionalProperties: false,
    required: ['report_id', 'command'],
    properties: {
      report_id: { type: 'string', maxLength: 36 },
      causation_id: { type: ['string', 'null'], maxLength: 36 },
      seen_seq: { type: 'integer', minimum: 0 },
      command: {
        oneOf: [
          commandOf('StopIfCancelled', [], {}),
          commandOf('CompleteStep', ['result'], {
            result: {
              type: 'object',
              additionalProperties: false,
              required: ['type', 'data'],
              properties: { type: { type: 'string', maxLength: 64 }, data: { type: 'object' } },
            },
          }),
          commandOf('FailStep', ['reason', 'retryable'], {
            reason: { type: 'string', maxLength: 4096 },
            retryable: { type: 'boolean' },
          }),
          commandOf('ReportProgress', ['waitedMs', 'deadlineMs', 'seen'], {
            waitedMs: { type: 'number', minimum: 0, maximum: 1e10 },
            deadlineMs: { type: 'number', minimum: 0, maximum: 1e10 },
            seen: { type: 'string', maxLength: 2048 },
          }),
        ],
      },
    },
  };
};

/** POST /api/runner/v1/runs/{id}/logs: the run's log lines, each of a step of the kept plans; the service stamps the time. */
export const logSchema = (steps: readonly string[] = allSteps()) => ({
  type: 'object',
  additionalProperties: false,
  required: ['entries'],
  properties: {
    entries: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_LOG_ENTRIES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['level', 'step', 'msg'],
        properties: {
          level: { enum: ['info', 'warn', 'error'] },
          step: { enum: [...steps] },
          msg: { type: 'string', maxLength: 4096 },
        },
      },
    },
  },
});

const ajv = new Ajv({ allErrors: false, strict: true });
/** The validators of the kept plans' steps, compiled again when a plan is deployed. */
let validators: { generation: number; report: ValidateFunction; logs: ValidateFunction } | undefined;
function validatorsNow() {
  if (validators?.generation !== plansGeneration())
    validators = {
      generation: plansGeneration(),
      report: ajv.compile(reportSchema()),
      logs: ajv.compile(logSchema()),
    };
  return validators;
}

interface Report {
  report_id: string;
  causation_id?: string | null;
  seen_seq?: number;
  command: Command & { step: Step };
}

/**
 * The id of the `index`-th event a report appends: derived from the run and the runner's report id, so
 * a report sent again (after a timeout, or to a restarted service) finds what it appended the first
 * time instead of appending it twice. UUID-shaped (version 8: custom), like the random ids.
 */
export function reportEventId(runId: string, reportId: string, index: number): string {
  const h = createHash('sha256').update(`${runId}\n${reportId}\n${index}`).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const forbidden = (code: string, message: string) => new ApiError(403, code, message);
const runEnded = () => forbidden(RUN_ENDED, 'the run has ended; its runner credential no longer works');

/**
 * What a runner Job may do, on its own run only (the credential guard checked that): read the run's
 * events and inputs, record the outcome and progress of the step the run is in (decided here, by the
 * run's rules), write the certificate it fetched and log lines. The service is the only writer.
 */
@Injectable()
export class RunnerReports {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(RUN_INPUTS) private readonly inputs: RunInputs,
    @Inject(RUN_LOGS) private readonly logs: RunLogStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async events(runId: string): Promise<{ items: StoredEvent[] }> {
    const { events } = await this.store.readRun(runId);
    if (isTerminal(fold(events))) throw runEnded();
    return { items: events };
  }

  /** Decides and appends a runner's command; the same report again answers what it appended the first time. */
  async report(runId: string, body: unknown): Promise<{ appended: StoredEvent[]; history: StoredEvent[] }> {
    const report = parseReport(withoutNul(body));
    // A failure's reason is shown in answers, the console and terminals: no escape sequences from a runner.
    if (report.command.type === 'FailStep') report.command.reason = printableText(report.command.reason);
    const { events } = await this.store.readRun(runId);
    const earlier = events.findIndex((e) => e.id === reportEventId(runId, report.report_id, 0));
    if (earlier >= 0) {
      const ids = new Set(events.slice(earlier).map((_, i) => reportEventId(runId, report.report_id, i)));
      return { appended: events.slice(earlier).filter((e) => ids.has(e.id)), history: events.slice(0, earlier) };
    }
    if (report.causation_id && !events.some((e) => e.id === report.causation_id))
      throw invalid('causation_id', 'is not an event of this run');
    const state = fold(events);
    if (isTerminal(state)) throw runEnded();
    if (state.step !== report.command.step)
      throw forbidden('not_current_step', `the run is not at step ${report.command.step}`);
    if (report.command.type === 'ReportProgress' && !reportsProgress(state, report.command.step))
      throw forbidden('progress_not_allowed', `the run's plan has no progress for ${report.command.step}`);
    if (tooMuchProgress(report.command, events)) return { appended: [], history: events };
    await this.checkResult(runId, report.command);
    try {
      const decided = await handleCommand(this.store, runDecider, runId, report.command, {
        causationId: report.causation_id ?? null,
        seenSeq: report.seen_seq,
        idFor: (_, i) => reportEventId(runId, report.report_id, i),
      });
      return { appended: decided.appended, history: decided.history };
    } catch (e) {
      // The stream answered from behind the runner (a new leader): the runner sends the report again.
      if (e instanceof StaleRead) throw new ApiError(503, 'stale_read', 'the run was read from behind; try again', 1);
      throw e;
    }
  }

  /**
   * What the run's rules cannot see: the controller a cluster-sourced wait found must be the one the
   * settings name (the fetch goes there next), and a fetched certificate's fingerprint must be the one
   * of the certificate the runner stored (the full pass seals for that one).
   */
  private async checkResult(runId: string, command: Command): Promise<void> {
    if (command.type !== 'CompleteStep') return;
    const { result } = command;
    if (result.type === 'SealedSecretsReady' && result.data.source === 'cluster') {
      const { namespace, names } = this.config.steps.sealedSecrets;
      const found = result.data.controller;
      if (!found || found.namespace !== namespace || !names.includes(found.name))
        throw invalid(
          'command.result.data.controller',
          `must be one of ${names.map((n) => `${namespace}/${n}`).join(', ')}`,
        );
    }
    if (result.type === 'CertFetched') {
      const pem = await this.inputs.get(runId, SEALING_CERT_INPUT);
      const stored = pem ? parseSealingCertificate(pem).fingerprintSha256 : null;
      if (stored !== result.data.fingerprint_sha256)
        throw invalid(
          'command.result.data.fingerprint_sha256',
          'is not the fingerprint of the certificate stored for this run',
        );
    }
  }

  async input(runId: string, name: string): Promise<{ value: string | null }> {
    if (!Object.hasOwn(RUNNER_INPUTS, name)) throw forbidden('input_not_allowed', 'a runner may not read this input');
    await this.events(runId);
    return { value: await this.inputs.get(runId, name) };
  }

  /** Writes an input during the step that produces it (the fetched certificate), checked for what it is. */
  async putInput(runId: string, name: string, body: unknown): Promise<void> {
    const value = (body as { value?: unknown } | null)?.value;
    if (!Object.hasOwn(RUNNER_INPUTS, name)) throw forbidden('input_not_allowed', 'a runner may not write this input');
    if (typeof value !== 'string' || Buffer.byteLength(value) > MAX_CERTIFICATE_BYTES)
      throw invalid('value', `must be a string of at most ${MAX_CERTIFICATE_BYTES} bytes`);
    try {
      parseSealingCertificate(value);
    } catch (e) {
      throw invalid('value', (e as Error).message);
    }
    const state = fold((await this.store.readRun(runId)).events);
    if (isTerminal(state)) throw runEnded();
    if (state.step !== RUNNER_INPUTS[name])
      throw forbidden('not_current_step', `the run is not at step ${RUNNER_INPUTS[name]}`);
    // A run that came with its certificate keeps it: only a run whose certificate is fetched has one to write.
    if (state.request?.target.kind !== 'kubeconfig_secret')
      throw forbidden('input_not_allowed', "this run's certificate was given with the request");
    await this.inputs.put(runId, name, value);
  }

  /** Appends log lines, redacted again and stamped with the service's clock. */
  async appendLogs(runId: string, raw: unknown): Promise<{ appended: number }> {
    const body = withoutNul(raw);
    const validLogs = validatorsNow().logs;
    if (!validLogs(body))
      throw invalid(`body${validLogs.errors?.[0]?.instancePath ?? ''}`, problemOf(validLogs.errors));
    const state = fold((await this.events(runId)).items);
    const { entries } = body as { entries: { level: string; step: string; msg: string }[] };
    // A runner writes the lines of the step the run is at, not lines that look like another step's.
    if (entries.some((e) => e.step !== state.step))
      throw forbidden('not_current_step', `the run is at step ${state.step}`);
    for (const e of entries)
      await this.logs.append(runId, {
        time: new Date().toISOString(),
        level: e.level,
        step: e.step,
        msg: redact(e.msg),
      });
    return { appended: entries.length };
  }
}

/** Whether the run's plan lets a runner report progress for the step (its long waits). */
const reportsProgress = (state: ReturnType<typeof fold>, stepName: string) =>
  runPlanOf(state)?.steps.find((s) => s.name === stepName)?.runner.progress === true;

/** A wait that already reported this many times for its step: further progress is dropped, not appended. */
function tooMuchProgress(command: Command, events: StoredEvent[]): boolean {
  if (command.type !== 'ReportProgress') return false;
  const reported = events.filter((e) => e.type === 'StepProgress' && e.data.step === command.step).length;
  return reported >= MAX_PROGRESS_PER_STEP;
}

const problemOf = (errors: ValidateFunction['errors']) => errors?.[0]?.message ?? 'is invalid';

function parseReport(body: unknown): Report {
  const validReport = validatorsNow().report;
  if (!validReport(body))
    throw invalid(`body${validReport.errors?.[0]?.instancePath ?? ''}`, problemOf(validReport.errors));
  const report = body as unknown as Report;
  if (!isRunId(report.report_id)) throw invalid('report_id', 'must be a UUID');
  if (report.causation_id != null && !isRunId(report.causation_id)) throw invalid('causation_id', 'must be a UUID');
  if (report.command.type === 'CompleteStep') {
    const { result } = report.command;
    if (!isEventType(result.type)) throw invalid('command.result.type', 'is not an event type');
    const problem = checkEventData(result.type, result.data);
    if (problem) throw invalid('command.result.data', problem);
  }
  return report;
}
