/**
 * The runner API's contract, shared by the service (src/runner-api) and scaffold-runner (src/runner).
 * Versioned like the public API: a change a runner of the previous release cannot follow gets /v2.
 */
export const RUNNER_API_PREFIX = 'api/runner/v1/runs';

/** The answer for a run that has ended (403): its credential no longer works, and the runner is done. */
export const RUN_ENDED = 'run_ended';
