/**
 * The git helper process (started by GitHost): runs each command it is sent with simple-git and
 * answers with git's output or its error message. It lives as long as its parent's IPC channel.
 */
import { GitCall, runGitCall } from './git-command';

process.on('message', (message: { id: number; call: GitCall }) => {
  runGitCall(message.call).then(
    (value) => process.send?.({ id: message.id, ok: true, value }),
    (e: unknown) => process.send?.({ id: message.id, ok: false, message: (e as Error)?.message ?? String(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
