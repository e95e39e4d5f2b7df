import { createHash, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { EventStore, formatLogLine, IdempotencyKeys, RunInputs, RunLogStore } from '../../libs/event-store/src';
import { EVENT_TYPES, isEventType, isRunId, ScaffoldRequestedData, ScaffoldTarget, StoredEvent, TERMINAL_EVENTS } from '../../libs/events/src';
import { Command, fold, isTerminal, RUN_STATUSES, RunCommands, RunRuleViolation, type RunState } from '../../libs/run-decider/src';
import {
  CredentialPlanEntry,
  GeneratorInputError,
  GeneratorValidationError,
  missingSupplied,
  PreviewChange,
  referenceCredentialPlan,
  SuppliedCredentials,
  TreeGenerator,
} from '../../libs/generator/src';
import { TREE_GENERATOR } from '../generation/generation.module';
import type { GenerateSummary } from '../../libs/generator/src/context';
import { GitStepError, GitWorkspace, withoutCredentials } from '../../libs/git/src';
import { passOptions, redact, SEALING_CERT_INPUT, SuppliedCredentialsSource } from '../../libs/steps/src';
import { ApiError, invalid, notFound } from '../common/api-error';
import { CallerIdentity, owns, requireOperator } from '../common/api-keys';
import { Quotas } from './quotas';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { EVENT_STORE, IDEMPOTENCY_KEYS, RUN_INPUTS, RUN_LOGS } from '../event-log/event-log.module';
import { SUPPLIED_CREDENTIALS } from '../kubernetes/credentials-source';
import { JOB_LOGS, type JobLogs } from '../kubernetes/job-logs';
import { RunReadModel } from '../projection/run-read-model';
import { RunView, toView } from '../projection/run-view';
import { CreateRequest, CreateTarget, parseCreateRequest } from './create-request';
import { checkRepositoryScope, checkSecretScope } from './repository-scope';

/** What the event records of a target: references, fingerprints and public keys only. */
function eventTarget(t: CreateTarget): ScaffoldTarget {
  if (t.kind === 'sealing_cert') return { kind: 'sealing_cert', fingerprint_sha256: t.cert.fingerprintSha256, not_after: t.cert.notAfter.toISOString() };
  if (t.kind === 'kubeconfig_secret') return { kind: 'kubeconfig_secret', ...t.ref };
  return { kind: 'age_recipients', recipients: t.recipients };
}

/** What ScaffoldRequested records of a request: the caller as requested_by, and the folder's owner when an admin acts for another key. */
function requestedData(req: CreateRequest, caller: CallerIdentity, folderOwner: string): ScaffoldRequestedData {
  return {
    cluster_name: req.cluster_name,
    domain: req.domain,
    region: req.region,
    acme_email: req.acme_email,
    repo_url: req.repo_url,
    branch: req.branch,
    target: eventTarget(req.target),
    requested_by: caller.name,
    ...(req.cluster_vars ? { cluster_vars: req.cluster_vars } : {}),
    ...(req.credentials_secret ? { credentials_secret: req.credentials_secret } : {}),
    ...(req.flux_url ? { flux_url: req.flux_url } : {}),
    ...(req.host_map ? { host_map: req.host_map } : {}),
    ...(req.reference_domain ? { reference_domain: req.reference_domain } : {}),
    ...(folderOwner !== caller.name ? { cluster_owner: folderOwner } : {}),
  };
}

/** The answer to a preview: the pass it ran, the generator's summary and the changes to the repository. */
export interface PreviewReport {
  pass: 'infra' | 'full';
  note?: string;
  summary: GenerateSummary;
  changes: PreviewChange[];
}

/** How an event is shown to auditors and watchers. */
export const eventView = (e: StoredEvent) => ({ seq: e.seq, id: e.id, type: e.type, schema_version: e.schema_version, time: e.time, causation_id: e.causation_id, data: visibleData(e) });

/** Event data as shown: a repository URL stored with credentials (accepted by older versions) is redacted. */
function visibleData(e: StoredEvent) {
  return e.type === 'ScaffoldRequested' ? { ...e.data, repo_url: withoutCredentials(e.data.repo_url) } : e.data;
}

/** The log's last line once a run has ended (whoever ended it: a step, the Job watcher, a cancel), from its events. */
function outcomeLine(state: RunState): string | null {
  if (!isTerminal(state)) return null;
  const level = state.status === 'succeeded' ? 'INFO' : state.status === 'failed' ? 'ERROR' : 'WARN';
  const commits = state.status === 'succeeded' ? ` (infra ${state.infraCommit?.slice(0, 12)}, full ${state.fullCommit?.slice(0, 12)})` : '';
  return `${state.finishedAt} ${level} [run] run ${state.status}: ${state.message}${commits}`;
}

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
const requestDigest = (data: ScaffoldRequestedData) => sha256(JSON.stringify(canonical(data)));

/** Whether a stored request is the one a new body describes (an Idempotency-Key retry), whoever's clock recorded it. */
function sameRequest(stored: ScaffoldRequestedData | null, fresh: ScaffoldRequestedData): boolean {
  return stored !== null && requestDigest(stored) === requestDigest(fresh);
}

const idempotencyKeyReused = () => new ApiError(422, 'idempotency_key_reused', 'Idempotency-Key: was used for a different request by this key');

/** The list cursor: the last row's (created_at, id), so runs created in the same millisecond are neither lost nor repeated. */
const encodeCursor = (createdAt: Date, id: string) => Buffer.from(`${createdAt.toISOString()}|${id}`).toString('base64url');

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [time, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(time);
  if (Number.isNaN(createdAt.getTime()) || !isRunId(id)) throw invalid('cursor', 'is not a cursor this API returned');
  return { createdAt, id };
}

/** Reads that need PostgreSQL answer 503 while it is down, naming it. */
async function fromReadModel<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError(503, 'read_model_unavailable', 'PostgreSQL (the read-model) is not answering');
  }
}

/** The application service behind both the REST and the NATS API: validation, rules and errors live here once. */
@Injectable()
export class ScaffoldsService {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly commands: RunCommands,
    @Inject(RUN_INPUTS) private readonly inputs: RunInputs,
    @Inject(RUN_LOGS) private readonly runLogs: RunLogStore,
    private readonly readModel: RunReadModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly quotas: Quotas,
    @Inject(TREE_GENERATOR) private readonly generator: TreeGenerator,
    @Inject(IDEMPOTENCY_KEYS) private readonly idempotencyKeys: IdempotencyKeys,
    /** The run's Job pod logs (EXECUTOR=kubernetes). */
    @Optional() @Inject(JOB_LOGS) private readonly jobLogs?: JobLogs,
    /** Management-cluster Secrets with supplied credentials (when the service reaches the management cluster). */
    @Optional() @Inject(SUPPLIED_CREDENTIALS) private readonly credentials?: SuppliedCredentialsSource,
  ) {}

  /** The reference's credential plan (classes only; empty when the generator cannot read the reference: the run reports why). */
  private referenceCredentials(): CredentialPlanEntry[] {
    return referenceCredentialPlan(this.config.steps.templateDir, this.config.steps.referenceEnv);
  }

  /**
   * The registry pull secrets of the reference are built from REGISTRY_* settings. With the local
   * executor the steps run with this process's settings, so a missing one is refused before anything
   * is appended or pushed (a Job's settings come from its own Secret, which the service cannot see).
   */
  private checkRegistry(): void {
    if (this.config.executor !== 'local' || this.config.steps.registry) return;
    const pullSecrets = [
      ...new Set(
        this.referenceCredentials()
          .filter((e) => e.class === 'registry')
          .map((e) => `${e.namespace}/${e.name}`),
      ),
    ];
    if (pullSecrets.length === 0) return;
    throw new ApiError(
      422,
      'registry_missing',
      `the reference's registry pull secrets (${pullSecrets.join(', ')}) are built from REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD, which this service does not have`,
    );
  }

  /**
   * Credentials only their issuer can create, checked before anything is appended: the reference's
   * supplied keys need a credentials_secret, and when that Secret can be read now it must hold them
   * all (422 naming the missing keys, never a value). A Secret that is missing, not labelled as an
   * input or forbidden by RBAC gets the same answer as any other it cannot read (accepted; the run
   * reads it again before its first push and fails there with one message for all three), so the
   * answer does not tell a caller which Secrets exist.
   */
  private async checkSupplied(ref: { namespace: string; name: string } | undefined): Promise<SuppliedCredentials | undefined> {
    const plan = this.referenceCredentials();
    const needed = missingSupplied(plan, {});
    if (needed.length === 0) return undefined;
    if (!this.credentials) {
      throw new ApiError(
        422,
        'credentials_missing',
        `the reference needs credentials only their issuer can create (${needed.join(', ')}): they come from a credentials_secret, which needs access to the management cluster`,
      );
    }
    if (!ref) throw new ApiError(422, 'credentials_missing', `credentials_secret: the reference needs credentials only their issuer can create (${needed.join(', ')}); name the Secret holding them`);
    const supplied = await this.credentials.read(ref).catch(() => undefined);
    if (!supplied) return undefined;
    const missing = missingSupplied(plan, supplied);
    if (missing.length > 0) throw new ApiError(422, 'credentials_missing', `credentials_secret: Secret ${ref.namespace}/${ref.name} lacks ${missing.join(', ')}`);
    return supplied;
  }

  private checkId(id: unknown): string {
    if (!isRunId(id)) throw notFound();
    return id;
  }

  /**
   * The run's id and events from the stream, or 404: also for a run of another key (unless the caller is
   * an admin), so a key cannot even learn that another key's run exists.
   */
  private async requireRun(id: unknown, caller: CallerIdentity): Promise<{ runId: string; events: StoredEvent[] }> {
    const runId = this.checkId(id);
    const { events } = await this.store.readRun(runId);
    if (events.length === 0 || !owns(caller, fold(events).request?.requested_by)) throw notFound();
    return { runId, events };
  }

  /** A create or preview body, validated, and refused (403) when it reaches outside the caller's role or scope. */
  private parseInScope(body: unknown, caller: CallerIdentity): CreateRequest {
    requireOperator(caller);
    const req = parseCreateRequest(body, { ...this.config, acceptKubeconfigTargets: this.config.reachesManagementCluster });
    checkRepositoryScope(caller, req);
    checkSecretScope(caller, req, this.config.secretNamespaces);
    return req;
  }

  /**
   * The key that owns the request's cluster folder in its repository (the read-model's first run
   * there), asked before anything is cloned or appended: the caller, or none yet (then the caller), or
   * another key: 403 for non-admins, with nothing of the owner's in the answer; admins act for the
   * owner. While PostgreSQL is down nobody is refused here: the folder's marker still refuses a run of
   * another owner before it writes anything, with the same generic reason.
   */
  private async folderOwner(req: CreateRequest, caller: CallerIdentity): Promise<string> {
    const owner = await this.readModel.clusterOwner(req.repo_url, req.cluster_name).catch(() => undefined);
    if (owner !== undefined && owner !== caller.name && caller.role !== 'admin') {
      throw new ApiError(403, 'cluster_owned_elsewhere', `cluster ${req.cluster_name} in this repository belongs to another key`);
    }
    return owner ?? caller.name;
  }

  async create(body: unknown, caller: CallerIdentity, idempotencyKey?: string): Promise<{ run: RunView; created: boolean }> {
    const req = this.parseInScope(body, caller);
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 200 || /[\0\r\n]/.test(idempotencyKey))) {
      throw invalid('Idempotency-Key', 'must be 1 to 200 characters without line breaks');
    }
    const data = requestedData(req, caller, await this.folderOwner(req, caller));
    const runId = idempotencyKey ? await this.runIdForKey(caller, idempotencyKey, data) : randomUUID();
    if (idempotencyKey) {
      const { events } = await this.store.readRun(runId);
      if (events.length > 0) {
        const state = fold(events);
        if (!sameRequest(state.request, data)) throw idempotencyKeyReused();
        return { run: toView(runId, state), created: false };
      }
    }
    await this.quotas.beforeCreate(caller);
    // The 409 check reads the read-model; while PostgreSQL is down requests are still accepted (appends go on).
    this.checkRegistry();
    await this.checkSupplied(req.credentials_secret);
    const active = await this.readModel.activeFor(req.repo_url, req.cluster_name).catch(() => null);
    if (active) throw new ApiError(409, 'run_active', `run ${active.id} for ${req.cluster_name} in this repository is still ${active.status}`);
    if (req.target.kind === 'sealing_cert') await this.inputs.put(runId, SEALING_CERT_INPUT, req.target.cert.pem);
    const { state, appended } = await this.commands.handle(runId, { type: 'RequestScaffold', data }, { idFor: () => runId });
    return { run: toView(runId, state), created: appended.length > 0 };
  }

  /**
   * The run an Idempotency-Key stands for: a random id claimed for the caller's key with the request's
   * digest, or the one an earlier request with that key claimed. The same key with another body is a
   * client bug, not a retry: answering the first run would hide it.
   */
  private async runIdForKey(caller: CallerIdentity, idempotencyKey: string, data: ScaffoldRequestedData): Promise<string> {
    const scope = sha256(`${caller.name}\0${idempotencyKey}`);
    const claim = await this.idempotencyKeys.claim(scope, { runId: randomUUID(), requestDigest: requestDigest(data) });
    if (claim.requestDigest !== requestDigest(data)) throw idempotencyKeyReused();
    return claim.runId;
  }

  /**
   * What a run of this request would change, without a run: the repository is cloned into a scratch
   * folder and the pass runs on a copy of it (nothing is appended, pushed or kept). The full pass when
   * the request gives the certificate or age recipients; the infra pass for a kubeconfig_secret target.
   */
  async preview(body: unknown, caller: CallerIdentity): Promise<PreviewReport> {
    const req = this.parseInScope(body, caller);
    const full = req.target.kind !== 'kubeconfig_secret';
    const request = requestedData(req, caller, await this.folderOwner(req, caller));
    // Counted as a run is (429), and stopped at its deadline: its git and kubectl are killed with it.
    const release = this.quotas.beginPreview(caller);
    const deadline = AbortSignal.timeout(this.config.previewTimeoutMs);
    const dir = join(this.config.steps.workDir, 'preview', randomUUID());
    try {
      const ws = await GitWorkspace.clone(
        join(dir, 'repo'),
        { url: req.repo_url, branch: req.branch },
        this.config.steps.gitIdentity,
        this.config.steps.gitAccess,
        this.config.steps.repoCache,
        deadline,
      );
      const certPem = req.target.kind === 'sealing_cert' ? req.target.cert.pem : undefined;
      const supplied = await this.checkSupplied(req.credentials_secret);
      const options = passOptions(request, this.config.steps, ws.dir, full ? 'full' : 'infra', certPem, supplied);
      const { summary, changes } = await this.generator.preview(options, deadline);
      const note = full ? undefined : "the full pass needs the cluster's sealing certificate, which a run fetches once the cluster is up";
      return { pass: full ? 'full' : 'infra', ...(note ? { note } : {}), summary, changes };
    } catch (e) {
      if (deadline.aborted) throw new ApiError(504, 'preview_timeout', `the preview did not finish within PREVIEW_TIMEOUT_SECONDS (${this.config.previewTimeoutMs / 1000} s) and was stopped`);
      if (e instanceof GeneratorInputError || e instanceof GeneratorValidationError || e instanceof GitStepError) throw new ApiError(422, 'preview_failed', redact(e.message));
      throw e;
    } finally {
      release();
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** From the read-model; a run the projection has not reached yet is folded from the stream (never a 404 after POST). */
  async get(id: unknown, caller: CallerIdentity): Promise<RunView> {
    const runId = this.checkId(id);
    const row = await fromReadModel(() => this.readModel.byId(runId));
    const state = row ? row.state : fold((await this.store.readRun(runId)).events);
    if (!state.request || !owns(caller, state.request.requested_by)) throw notFound();
    return toView(runId, state);
  }

  async list(query: { status?: unknown; limit?: unknown; cursor?: unknown }, caller: CallerIdentity): Promise<{ items: RunView[]; next_cursor: string | null }> {
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalid('limit', 'must be an integer from 1 to 500');
    if (query.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(String(query.status))) throw invalid('status', `must be one of ${RUN_STATUSES.join(', ')}`);
    const after = query.cursor === undefined ? undefined : decodeCursor(String(query.cursor));
    const owner = caller.role === 'admin' ? undefined : caller.name;
    const rows = await fromReadModel(() => this.readModel.page({ status: query.status === undefined ? undefined : String(query.status), after, owner, limit }));
    const items = rows.map((r) => toView(r.id, r.state));
    const last = rows[rows.length - 1];
    return { items, next_cursor: rows.length === limit && last ? encodeCursor(last.created_at, last.id) : null };
  }

  async events(id: unknown, caller: CallerIdentity) {
    const { events } = await this.requireRun(id, caller);
    return { items: events.map(eventView) };
  }

  /** The audit log across runs, from the stream itself: since a time or a cursor, optionally one type. */
  async allEvents(query: { since?: unknown; type?: unknown; limit?: unknown; cursor?: unknown }, caller: CallerIdentity) {
    const limit = query.limit === undefined ? 100 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('limit', 'must be an integer from 1 to 1000');
    const types = query.type === undefined ? undefined : String(query.type).split(',');
    if (types && !types.every(isEventType)) throw invalid('type', `must be event types: ${EVENT_TYPES.join(', ')}`);
    let since: Date | undefined;
    if (query.since !== undefined) {
      since = new Date(String(query.since));
      if (Number.isNaN(since.getTime())) throw invalid('since', 'must be an RFC 3339 time');
    }
    let fromSeq: number | undefined;
    if (query.cursor !== undefined) {
      fromSeq = Number(query.cursor);
      if (!Number.isInteger(fromSeq) || fromSeq < 1) throw invalid('cursor', 'is not a cursor this API returned');
      since = undefined;
    }
    const { events, nextSeq } = await this.store.readRange({ fromSeq, since, limit, types });
    const visible = caller.role === 'admin' ? events : await this.ownedBy(caller, events);
    return { items: visible.map((e) => ({ run_id: e.run_id, ...eventView(e) })), next_cursor: nextSeq === null ? null : String(nextSeq) };
  }

  /** The events of runs this caller owns (a page of the audit feed may then hold fewer than `limit`). */
  private async ownedBy(caller: CallerIdentity, events: StoredEvent[]): Promise<StoredEvent[]> {
    const owners = new Map<string, string | undefined>();
    for (const runId of new Set(events.map((e) => e.run_id))) owners.set(runId, fold((await this.store.readRun(runId)).events).request?.requested_by);
    return events.filter((e) => owners.get(e.run_id) === caller.name);
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
    const { runId } = await this.requireRun(id, caller);
    requireOperator(caller);
    try {
      const { state } = await this.commands.handle(runId, command);
      return toView(runId, state);
    } catch (e) {
      if (e instanceof RunRuleViolation) throw e.code === 'not_found' ? notFound() : new ApiError(409, 'already_finished', e.message);
      throw e;
    }
  }

  /** Follows a run's events live (SSE, NATS watchers) from after `afterSeq`, ending after the terminal event. */
  async follow(id: unknown, caller: CallerIdentity, afterSeq: number | undefined, onEvent: (e: ReturnType<typeof eventView>) => void | Promise<void>, signal: AbortSignal) {
    const { runId, events } = await this.requireRun(id, caller);
    const last = events[events.length - 1];
    if (TERMINAL_EVENTS.includes(last.type) && afterSeq !== undefined && afterSeq >= last.seq) return;
    await this.store.follow({ runId, afterSeq, signal, onEvent: (e) => onEvent(eventView(e)), until: (e) => TERMINAL_EVENTS.includes(e.type) });
  }

  /** The run's log lines (already redacted when written), oldest first, as text. */
  async logs(id: unknown, caller: CallerIdentity): Promise<string> {
    const { runId, events } = await this.requireRun(id, caller);
    const entries = await this.runLogs.read(runId);
    const lines = entries.map(formatLogLine);
    if (this.jobLogs) {
      const pods = await this.jobLogs(runId).catch((e) => `--- Job logs unavailable: ${(e as Error).message} ---\n`);
      if (pods) lines.push(pods.trimEnd());
    }
    const outcome = outcomeLine(fold(events));
    if (outcome) lines.push(outcome);
    if (lines.length === 0) return '';
    return lines.join('\n') + '\n';
  }
}
