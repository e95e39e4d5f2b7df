import Ajv, { ValidateFunction } from 'ajv';
import type { EventType } from './event-types';
import { allSteps, FIRST_PLAN, plansGeneration } from './run-plans';

/**
 * The current schema of every event's data, and how older versions are raised to it. A replay of an
 * old stream reads version N events through the upcasters, so the decider and the projection only
 * ever see current shapes.
 */
const str = { type: 'string' } as const;
const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties,
});
const controller = obj({ namespace: str, name: str });
const count = { type: 'integer', minimum: 0 } as const;
const pass = { enum: ['infra', 'full'] } as const;
const mergeRequest = obj({ number: { type: 'integer', minimum: 1 }, url: str, head: str, base: str });
/** A pass's provenance (optional: events before it existed, a reference outside git, a retry of a pushed pass). */
const referenceRevision = {
  reference_commit: { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' },
  reference_dirty: { type: 'boolean' },
  gitops_path: { type: 'string', maxLength: 1024 },
} as const;

export const CURRENT_VERSION: Record<EventType, number> = {
  ScaffoldRequested: 2,
  InfraPushed: 1,
  SealedSecretsReady: 2,
  CertFetched: 1,
  FullPushed: 1,
  StepCompleted: 1,
  ScaffoldSucceeded: 1,
  StepFailed: 1,
  ScaffoldFailed: 1,
  ScaffoldCancelRequested: 1,
  ScaffoldCancelled: 1,
  StepProgress: 1,
  StepRedriveRequested: 1,
  MergeRequestOpened: 1,
  MergeRequestMerged: 1,
  MergeRequestClosed: 1,
};

/**
 * The data schemas with the step enum of these steps (by default every step of the kept run plans: a plan's new
 * step is in them by itself).
 */
export function dataSchemas(steps: readonly string[] = allSteps()): Record<EventType, object> {
  const step = { enum: [...steps] };
  return {
    // cluster_vars, credentials_secret, flux_url, host_map, path_map, reference_domain, reference_env, cluster_owner, delivery, replace and strict are optional: events written before they existed stay valid at their version.
    // cluster_owner: the key owning the cluster folder when it is not requested_by (an admin acting for the owner).
    ScaffoldRequested: obj(
      {
        cluster_name: str,
        domain: str,
        region: str,
        acme_email: str,
        repo_url: str,
        branch: str,
        requested_by: str,
        target: {
          oneOf: [
            obj({ kind: { const: 'sealing_cert' }, fingerprint_sha256: str, not_after: str }),
            obj({ kind: { const: 'kubeconfig_secret' }, namespace: str, name: str, key: str }),
            obj({ kind: { const: 'age_recipients' }, recipients: { type: 'array', minItems: 1, items: str } }),
          ],
        },
        cluster_vars: { type: 'object', additionalProperties: str },
        credentials_secret: obj({ namespace: str, name: str }),
        flux_url: str,
        host_map: { type: 'object', additionalProperties: str },
        path_map: { type: 'object', additionalProperties: str },
        reference_domain: str,
        reference_env: str,
        cluster_owner: str,
        delivery: obj(
          {
            mode: { enum: ['push', 'merge_request'] },
            forge: str,
            api_url: str,
            auto_merge: { type: 'boolean' },
          },
          ['mode'],
        ),
        replace: { type: 'object', additionalProperties: str },
        strict: { type: 'boolean' },
        // v2: the run plan the run started with.
        plan: obj({ kind: str, version: { type: 'integer', minimum: 1 } }),
      },
      ['cluster_name', 'domain', 'region', 'acme_email', 'repo_url', 'branch', 'requested_by', 'target'],
    ),
    // unchanged is optional: events written before it existed stay valid at version 1.
    // reference_commit, reference_dirty and gitops_path (the pass's provenance) are optional: earlier events stay valid at version 1.
    InfraPushed: obj(
      { commit: str, files_changed: { type: 'integer' }, unchanged: { type: 'boolean' }, ...referenceRevision },
      ['commit', 'files_changed'],
    ),
    // v2: which controller was found (null when the certificate came with the request).
    SealedSecretsReady: obj({
      source: { enum: ['given_certificate', 'cluster'] },
      controller: { oneOf: [{ type: 'null' }, controller] },
    }),
    CertFetched: obj({ fingerprint_sha256: str, not_after: str }),
    FullPushed: obj(
      { commit: str, objects_sealed: { type: 'integer' }, unchanged: { type: 'boolean' }, ...referenceRevision },
      ['commit', 'objects_sealed'],
    ),
    StepCompleted: obj({ step, summary: str }),
    ScaffoldSucceeded: obj({ infra_commit: str, full_commit: str }),
    StepFailed: obj({ step, attempt: { type: 'integer', minimum: 1 }, reason: str, will_retry: { type: 'boolean' } }),
    ScaffoldFailed: obj({ step, reason: str }),
    ScaffoldCancelRequested: obj({ requested_by: str }),
    ScaffoldCancelled: obj({ step: { oneOf: [{ type: 'null' }, step] } }),
    StepProgress: obj({
      step,
      waited_ms: { type: 'integer', minimum: 0 },
      deadline_ms: { type: 'integer', minimum: 0 },
      seen: str,
    }),
    StepRedriveRequested: obj({ step, requested_by: str }),
    MergeRequestOpened: obj(
      {
        step,
        pass,
        commit: str,
        files_changed: count,
        objects_sealed: count,
        unchanged: { type: 'boolean' },
        request: mergeRequest,
        ...referenceRevision,
      },
      ['step', 'pass', 'commit', 'files_changed', 'objects_sealed'],
    ),
    MergeRequestMerged: obj({ step, pass, merge_commit: str, request: mergeRequest, edited: { type: 'boolean' } }, [
      'step',
      'pass',
      'merge_commit',
    ]),
    MergeRequestClosed: obj({ step, pass, request: mergeRequest, reason: str }),
  };
}

/** The data schemas of this build's kept plans, as they were at start (the API documents). */
export const DATA_SCHEMAS: Record<EventType, object> = dataSchemas();

type Upcaster = (data: any) => any;

/** UPCASTERS[type][n] raises version n data to version n + 1. */
export const UPCASTERS: Partial<Record<EventType, Record<number, Upcaster>>> = {
  SealedSecretsReady: { 1: (d) => ({ source: d.source, controller: null }) },
  // Runs requested before run plans were started with the first one.
  ScaffoldRequested: { 1: (d) => ({ ...d, plan: d.plan ?? { ...FIRST_PLAN } }) },
};

const ajv = new Ajv({ strict: true, allErrors: false });
let validators: Map<EventType, ValidateFunction> | undefined;
let validatorsOf = -1;

/** The validators of the kept plans' schemas, compiled again when a plan is deployed. */
function validatorFor(type: EventType): ValidateFunction {
  if (!validators || validatorsOf !== plansGeneration()) {
    const schemas = validatorsOf === -1 && plansGeneration() === 0 ? DATA_SCHEMAS : dataSchemas();
    validators = new Map(Object.entries(schemas).map(([t, s]) => [t as EventType, ajv.compile(s)]));
    validatorsOf = plansGeneration();
  }
  return validators.get(type)!;
}

export function upcastData(type: EventType, version: number, data: unknown): unknown {
  let v = version;
  let d = data;
  while (v < CURRENT_VERSION[type]) {
    const up = UPCASTERS[type]?.[v];
    if (!up) throw new Error(`${type} v${v} has no upcaster to v${v + 1}`);
    d = up(d);
    v++;
  }
  if (v > CURRENT_VERSION[type])
    throw new Error(`${type} v${v} is newer than this build understands (v${CURRENT_VERSION[type]})`);
  return d;
}

/**
 * Compiles the event schemas' validators now (about a quarter of a second): a process that reads or appends
 * events calls it as it starts, so its first event does not hold its event loop (and every answer waiting
 * behind it) while they compile.
 */
export function compileEventValidators(): void {
  validatorFor('ScaffoldRequested');
}

/** Null when valid, else the first problem. */
export function checkEventData(type: EventType, data: unknown): string | null {
  const validate = validatorFor(type);
  if (validate(data)) return null;
  const e = validate.errors![0];
  return `${type}${e.instancePath || ''} ${e.message}`;
}
