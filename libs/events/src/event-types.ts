/**
 * Every event type of a run, by name: a file without imports, so the run plans (which name the events that start
 * and end their steps) and the catalogue (which gives each its data) both read it without a circle.
 */
export const EVENT_TYPES = [
  'ScaffoldRequested',
  'InfraPushed',
  'SealedSecretsReady',
  'CertFetched',
  'FullPushed',
  'StepCompleted',
  'ScaffoldSucceeded',
  'StepFailed',
  'ScaffoldFailed',
  'ScaffoldCancelRequested',
  'ScaffoldCancelled',
  'StepProgress',
  'StepRedriveRequested',
  'MergeRequestOpened',
  'MergeRequestMerged',
  'MergeRequestClosed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}
