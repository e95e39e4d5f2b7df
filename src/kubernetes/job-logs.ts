/** The run's Job pod logs, for GET .../logs (provided only with EXECUTOR=kubernetes). */
export const JOB_LOGS = Symbol('JOB_LOGS');
export type JobLogs = (runId: string) => Promise<string>;
