/**
 * The service's durable consumers on the event stream, by name: operators see these names in
 * `scaffolderctl stream-info` and in the lag metrics, which single out the projector's. (The step
 * consumers are named `step-<step>` by `durableNameFor` in libs/steps.)
 */

/** The read-model projection (also the name of its checkpoint row). */
export const PROJECTOR = 'projector';
/** EXECUTOR=kubernetes: a Job per requested run. */
export const LAUNCHER = 'job-launcher';
