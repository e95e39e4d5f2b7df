/**
 * The helper process (started by HelperProcess): runs each request it is sent (a git command with
 * simple-git, or a program) and answers with the output or the error. It lives as long as its
 * parent's IPC channel.
 */
import { execFile } from 'node:child_process';
import { runGitCall } from '../../git/src/git-command';
import type { HelperReply, HelperRequest } from './helper-process';

function exec(file: string, args: string[], options: { cwd?: string; maxBuffer?: number }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(file, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => (error ? reject(Object.assign(error, { stderr })) : resolve({ stdout, stderr }))),
  );
}

async function handle(request: HelperRequest): Promise<{ stdout: string; stderr: string }> {
  if (request.kind === 'git') return { stdout: await runGitCall(request.call), stderr: '' };
  return exec(request.file, request.args, request.options);
}

process.on('message', ({ id, request }: { id: number; request: HelperRequest }) => {
  handle(request).then(
    (out) => process.send?.({ id, ok: true, ...out } satisfies HelperReply),
    (e: { message?: string; code?: string | number; stderr?: string }) => process.send?.({ id, ok: false, message: e?.message ?? String(e), code: e?.code, stderr: e?.stderr } satisfies HelperReply),
  );
});
process.on('disconnect', () => process.exit(0));
