/**
 * Node's options for the service process; the Dockerfile's CMD and `npm start` carry the same (a test checks).
 *
 * Node 26's V8 lets an isolate's new space grow to 64 MiB under allocation (Node 20's: 32 MiB), and under the load
 * benchmark (200 runs) the main thread's stood at 57 MiB of a 682 MiB peak. With 8 MiB semi-spaces it stood at
 * 15 MiB; the short-lived garbage of API answers and event hand-offs is collected sooner, not kept longer.
 * The generator's worker threads get the same bound through their resource limits (GeneratorPool).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8'];
