export interface StreamNames {
  events: string;
  logs: string;
  inputs: string;
}

export const DEFAULT_STREAMS: StreamNames = {
  events: 'SCAFFOLD_EVENTS',
  logs: 'SCAFFOLD_LOGS',
  inputs: 'SCAFFOLD_INPUTS',
};

/** All events of one run share one subject, so the server can check the run's last sequence. */
export const runSubject = (runId: string) => `scaffold.run.${runId}`;
export const ALL_RUNS = 'scaffold.run.>';
export const logSubject = (runId: string) => `scaffold.logs.${runId}`;
export const inputSubject = (runId: string, name: string) => `scaffold.input.${runId}.${name}`;
/** Idempotency-Key claims live beside the inputs (same retention): `scope` is a hex digest of caller and key. */
export const idempotencySubject = (scope: string) => `scaffold.input.idempotency-key.${scope}`;
