/**
 * The helper process (started by HelperProcess): runs each request it is sent (a git command, or a
 * program) in a process group of its own and answers with the output or the error. A request can be
 * cancelled (its group is killed). It lives as long as its parent's IPC channel: when the parent goes
 * away (exits, is killed, its thread is terminated) or it is told to stop, it kills every group it
 * started first, so no git, ssh or kubectl outlives the service.
 */
import { runGitCall } from './git-command';
import type { HelperMessage, HelperReply, HelperRequest } from './helper-process';
import { ProgramOutput, processGroups } from './process-groups';

const groups = processGroups();
const inFlight = new Map<number, AbortController>();

function handle(request: HelperRequest, signal: AbortSignal): Promise<ProgramOutput> {
  if (request.kind === 'git')
    return runGitCall(request.call, groups, signal).then((stdout) => ({ stdout, stderr: '' }));
  // A given environment is the program's whole environment: a build must not inherit the service's variables.
  const env = request.options.env ?? process.env;
  return groups.run(request.file, request.args, {
    cwd: request.options.cwd,
    maxBuffer: request.options.maxBuffer,
    env,
    signal,
  });
}

function start(id: number, request: HelperRequest) {
  const abort = new AbortController();
  inFlight.set(id, abort);
  handle(request, abort.signal)
    .then(
      (out) => process.send?.({ id, ok: true, ...out } satisfies HelperReply),
      (e: { message?: string; code?: string | number; stderr?: string }) =>
        process.send?.({
          id,
          ok: false,
          message: e?.message ?? String(e),
          code: e?.code,
          stderr: e?.stderr,
        } satisfies HelperReply),
    )
    .finally(() => inFlight.delete(id));
}

process.on('message', (message: HelperMessage) => {
  if ('cancel' in message) inFlight.get(message.cancel)?.abort();
  else start(message.id, message.request);
});

/** Kills every program's group, then exits (the 'exit' handler of processGroups does the killing). */
const stop = () => process.exit(0);
process.on('disconnect', stop);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stop);
