import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EventStore, IdempotencyKeys, RunInputs } from '#libs/event-store';
import type { ScaffoldRequestedData } from '#libs/events';
import { Command, fold, RunCommands, RunRuleViolation } from '#libs/run-decider';
import { SEALING_CERT_INPUT } from '#libs/steps';
import { ApiError, invalid, notFound } from '../common/api-error';
import { CallerIdentity, requireOperator } from '../common/api-keys';
import { EVENT_STORE, IDEMPOTENCY_KEYS, RUN_INPUTS } from '../event-store/event-store.module';
import { RunReadModel } from '../projection/run-read-model';
import { RunView, toView } from '../projection/run-view';
import type { CreateRequest } from './create-request';
import { Quotas } from './quotas';
import { RequestChecks } from './request-checks';
import { requireRun } from './run-access';

/** A value with its object keys sorted, so two equal requests serialise alike whoever built them. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, x]) => [k, canonical(x)]),
  );
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/**
 * The caller's request: the plan a run started on is the service's choice, recorded beside it, not part of what was
 * asked. `strict: true` is the default every request gets, so a retry of a request recorded before the field existed
 * still names the same run; only an opt-out (`strict: false`) is part of the digest.
 */
export const requestDigest = ({ plan: _plan, strict, ...asked }: ScaffoldRequestedData) =>
  sha256(JSON.stringify(canonical(strict === false ? { ...asked, strict } : asked)));

/** Whether a stored request is the one a new body describes (an Idempotency-Key retry), whoever's clock recorded it. */
function sameRequest(stored: ScaffoldRequestedData | null, fresh: ScaffoldRequestedData): boolean {
  return stored !== null && requestDigest(stored) === requestDigest(fresh);
}

const idempotencyKeyReused = () =>
  new ApiError(422, 'idempotency_key_reused', 'Idempotency-Key: was used for a different request by this key');

function checkIdempotencyKey(idempotencyKey: string | undefined): void {
  if (
    idempotencyKey !== undefined &&
    (idempotencyKey.length === 0 || idempotencyKey.length > 200 || /[\0\r\n]/.test(idempotencyKey))
  ) {
    throw invalid('Idempotency-Key', 'must be 1 to 200 characters without line breaks');
  }
}

/** What changes runs, behind both the REST and the NATS API: a new run, and the operator commands on one. */
@Injectable()
export class ScaffoldCommands {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly commands: RunCommands,
    @Inject(RUN_INPUTS) private readonly inputs: RunInputs,
    private readonly readModel: RunReadModel,
    private readonly quotas: Quotas,
    @Inject(IDEMPOTENCY_KEYS) private readonly idempotencyKeys: IdempotencyKeys,
    private readonly checks: RequestChecks,
  ) {}

  async create(
    body: unknown,
    caller: CallerIdentity,
    idempotencyKey?: string,
  ): Promise<{ run: RunView; created: boolean }> {
    const req = await this.checks.parseInScope(body, caller);
    checkIdempotencyKey(idempotencyKey);
    const data = await this.checks.requestedData(req, caller);
    const runId = idempotencyKey ? await this.runIdForKey(caller, idempotencyKey, data) : randomUUID();
    const earlier = idempotencyKey ? await this.earlierRun(runId, data) : undefined;
    if (earlier) return { run: earlier, created: false };
    await this.quotas.beforeCreate(caller);
    await this.checkStartable(req);
    if (req.target.kind === 'sealing_cert') await this.inputs.put(runId, SEALING_CERT_INPUT, req.target.cert.pem);
    const { state, appended } = await this.commands.handle(
      runId,
      { type: 'RequestScaffold', data },
      { idFor: () => runId },
    );
    return { run: toView(runId, state), created: appended.length > 0 };
  }

  /**
   * The run an Idempotency-Key stands for: a random id claimed for the caller's key with the request's
   * digest, or the one an earlier request with that key claimed. The same key with another body is a
   * client bug, not a retry: answering the first run would hide it.
   */
  private async runIdForKey(
    caller: CallerIdentity,
    idempotencyKey: string,
    data: ScaffoldRequestedData,
  ): Promise<string> {
    const scope = sha256(`${caller.name}\0${idempotencyKey}`);
    const claim = await this.idempotencyKeys.claim(scope, { runId: randomUUID(), requestDigest: requestDigest(data) });
    if (claim.requestDigest !== requestDigest(data)) throw idempotencyKeyReused();
    return claim.runId;
  }

  /** The run a retry with the same Idempotency-Key already started, if it got as far as appending. */
  private async earlierRun(runId: string, data: ScaffoldRequestedData): Promise<RunView | undefined> {
    const { events } = await this.store.readRun(runId);
    if (events.length === 0) return undefined;
    const state = fold(events);
    if (!sameRequest(state.request, data)) throw idempotencyKeyReused();
    return toView(runId, state);
  }

  /** What a new run needs before anything is appended: the registry settings, supplied credentials, no active run on its folder. */
  private async checkStartable(req: CreateRequest): Promise<void> {
    this.checks.checkRegistry(req.reference_env);
    await this.checks.checkSupplied(req.credentials_secret, req.reference_env);
    // The 409 check reads the read-model; while PostgreSQL is down requests are still accepted (appends go on).
    const active = await this.readModel.activeFor(req.repo_url, req.cluster_name).catch(() => null);
    if (active)
      throw new ApiError(
        409,
        'run_active',
        `run ${active.id} for ${req.cluster_name} in this repository is still ${active.status}`,
      );
  }

  /** Runs the current step again (idempotent: the step checks the remote for its commit and the decider drops duplicates). */
  redrive(id: unknown, caller: CallerIdentity): Promise<RunView> {
    return this.commandRun(id, caller, { type: 'Redrive', requestedBy: caller.name });
  }

  cancel(id: unknown, caller: CallerIdentity): Promise<RunView> {
    return this.commandRun(id, caller, { type: 'RequestCancel', requestedBy: caller.name });
  }

  /** An operator command on a run of the caller's; the decider's refusals become 404 and 409. */
  private async commandRun(id: unknown, caller: CallerIdentity, command: Command): Promise<RunView> {
    const { runId } = await requireRun(this.store, id, caller);
    requireOperator(caller);
    try {
      const { state } = await this.commands.handle(runId, command);
      return toView(runId, state);
    } catch (e) {
      if (e instanceof RunRuleViolation)
        throw e.code === 'not_found' ? notFound() : new ApiError(409, 'already_finished', e.message);
      throw e;
    }
  }
}
