/**
 * What a run's status can be, as both APIs report and filter it ('retrying': a step failed and will be tried again).
 * A file of its own, without the decider's imports: scaffolderctl's option table reads it and starts without the
 * event store (#49).
 */
export const RUN_STATUSES = ['queued', 'running', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
