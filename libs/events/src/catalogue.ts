/**
 * The one place that defines every event of a scaffold run: its type, schema version and data.
 * Events carry references, names and fingerprints only: never a credential or certificate body.
 */

import type { EventType } from './event-types';
import type { PlanRef } from './run-plan';
import { allSteps, Step } from './run-plans';

export type { Step };
export { EVENT_TYPES, isEventType } from './event-types';
export type { EventType } from './event-types';
/** Every step of the kept run plans, in order (libs/events/src/run-plans.ts): the step enums follow from them. */
export const STEPS: readonly Step[] = allSteps() as Step[];

export type ScaffoldTarget =
  | { kind: 'sealing_cert'; fingerprint_sha256: string; not_after: string }
  | { kind: 'kubeconfig_secret'; namespace: string; name: string; key: string }
  /** The SOPS backend: the cluster's age public keys (no controller to wait for, no certificate). */
  | { kind: 'age_recipients'; recipients: string[] };

export interface ScaffoldRequestedData {
  cluster_name: string;
  domain: string;
  region: string;
  acme_email: string;
  repo_url: string;
  branch: string;
  target: ScaffoldTarget;
  requested_by: string;
  /** Cluster-vars references: values for the new cluster's cluster-vars (configuration, never credentials). */
  cluster_vars?: Record<string, string>;
  /** Where the supplied credentials are (a management-cluster Secret, read at use): a reference, never a value. */
  credentials_secret?: { namespace: string; name: string };
  /** Flux-example references: the new cluster's host for each reference host outside the reference domain. */
  host_map?: Record<string, string>;
  /** Paths in other repositories (a tenant's Kustomization path, where image automation pushes) and the new cluster's. */
  path_map?: Record<string, string>;
  /** The reference environment's domain, when the request names it. */
  reference_domain?: string;
  /** The reference environment (a name under clusters/ or a repository folder), when the request names one. */
  reference_env?: string;
  /** The URL the new cluster's Flux GitRepository fetches from, when it differs from repo_url (never with credentials). */
  flux_url?: string;
  /** The key owning the cluster folder when it is not requested_by: an admin's run for a folder another key scaffolded first. */
  cluster_owner?: string;
  /**
   * How the run's passes reach the branch Flux reads: absent or `push`, pushed to it; `merge_request`, each pass
   * on a branch of its own and a merge request a person (or the forge's auto-merge) merges. Names, never a token.
   */
  delivery?: DeliveryRequest;
  /**
   * The pass's last rewrite of the new cluster's own files (the generator's --replace): each OLD, as a whole word
   * in string values, becomes NEW. Identifiers, never a credential (a Secret's values are never rewritten).
   */
  replace?: Record<string, string>;
  /**
   * Refuse a pass whose output still names the reference (a leftover), before anything of it is pushed. The
   * service records it on every request (default true); an event without it predates the field and was not strict.
   */
  strict?: boolean;
  /** The run plan the run started with (and finishes on); version 1 events have none and are read as the first plan. */
  plan?: PlanRef;
}

export interface DeliveryRequest {
  mode: 'push' | 'merge_request';
  /** The forge (github, gitlab, gitea) when the settings' prefix for the repository does not say it. */
  forge?: string;
  /** The forge's API base URL when the settings' prefix does not say it. */
  api_url?: string;
  /** Ask the forge to merge once its checks pass (only where the settings allow it for the repository). */
  auto_merge?: boolean;
}

/** Which of the run's passes a merge request carries. */
export type DeliveredPass = 'infra' | 'full';

/** A merge request the run opened, as its events name it: where a person finds it, never a credential. */
export interface MergeRequestRef {
  number: number;
  url: string;
  /** The branch holding the pass (`scaffolder/<cluster>/<pass>/<run>`). */
  head: string;
  /** The branch Flux reads, which the request merges into. */
  base: string;
}

/**
 * What made a pass's files and where they are (what the environment's ownership marker records): the reference's
 * commit when it is a git working copy and whether its files differed from it, and the cluster's folder in the
 * repository. Absent: not a git working copy, events from before the fields, or a retry that found the pass pushed.
 */
export type PassProvenanceData = {
  reference_commit?: string;
  reference_dirty?: boolean;
  /** The new cluster's folder in the repository (clusters/<name>, or where a folder-form reference puts it). */
  gitops_path?: string;
};

export interface EventDataByType {
  ScaffoldRequested: ScaffoldRequestedData;
  /** unchanged: the branch already held this tree, so nothing was committed (commit is the branch head). */
  InfraPushed: { commit: string; files_changed: number; unchanged?: boolean } & PassProvenanceData;
  SealedSecretsReady: {
    source: 'given_certificate' | 'cluster';
    controller: { namespace: string; name: string } | null;
  };
  CertFetched: { fingerprint_sha256: string; not_after: string };
  FullPushed: { commit: string; objects_sealed: number; unchanged?: boolean } & PassProvenanceData;
  /** A step whose result carries nothing the run keeps (a plan's wait): which step, and what it saw, in words. */
  StepCompleted: { step: Step; summary: string };
  ScaffoldSucceeded: { infra_commit: string; full_commit: string };
  StepFailed: { step: Step; attempt: number; reason: string; will_retry: boolean };
  ScaffoldFailed: { step: Step; reason: string };
  ScaffoldCancelRequested: { requested_by: string };
  ScaffoldCancelled: { step: Step | null };
  /** A long step's progress (the readiness wait): appended when what it sees changes, or every minute. */
  StepProgress: { step: Step; waited_ms: number; deadline_ms: number; seen: string };
  /** An operator asks for the current step to run again (after a lost message or a dead consumer). */
  StepRedriveRequested: { step: Step; requested_by: string };
  /**
   * A pass pushed to a branch of its own and its merge request opened (or found open by a retry). `unchanged`:
   * the branch Flux reads already held the pass's tree, so no branch and no request (`request` absent).
   */
  MergeRequestOpened: {
    step: Step;
    pass: DeliveredPass;
    commit: string;
    files_changed: number;
    objects_sealed: number;
    unchanged?: boolean;
    request?: MergeRequestRef;
  } & PassProvenanceData;
  /**
   * The pass's request was merged (by a person or the forge): `merge_commit` is what the branch Flux reads now
   * holds. `edited`: the request's branch no longer ended at the commit the run pushed when it was merged.
   */
  MergeRequestMerged: {
    step: Step;
    pass: DeliveredPass;
    merge_commit: string;
    request?: MergeRequestRef;
    edited?: boolean;
  };
  /** The pass's request was closed without being merged: the run fails with this reason. */
  MergeRequestClosed: { step: Step; pass: DeliveredPass; request: MergeRequestRef; reason: string };
}

/** Every event type has its data here, and nothing else does. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const CATALOGUE_COVERS_EVENT_TYPES: Same<keyof EventDataByType, EventType> = true;

export const TERMINAL_EVENTS: readonly EventType[] = ['ScaffoldSucceeded', 'ScaffoldFailed', 'ScaffoldCancelled'];

/** What the decider produces: an event without identity or time (the caller stamps those). */
export type EventDraft = { [T in EventType]: { type: T; data: EventDataByType[T] } }[EventType];

/** The JSON envelope every event is stored in. */
export type ScaffoldEvent = EventDraft & {
  id: string;
  schema_version: number;
  run_id: string;
  time: string;
  causation_id: string | null;
};

/** An event as read back from the stream, with its stream sequence. */
export type StoredEvent = ScaffoldEvent & { seq: number };
