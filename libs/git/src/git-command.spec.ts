import { rmSync } from 'node:fs';
import { runGitCall } from './git-command';

/** What git (and every program it starts) sees of this process's environment: an alias running `env` prints it. */
async function gitsEnvironment(access: Record<string, string> = {}): Promise<string> {
  return runGitCall({ op: 'raw', args: ['-c', 'alias.printenv=!env', 'printenv'], env: access, binary: ['git'] });
}

describe("git's environment: an allowlist of the service's variables, then the access environment", () => {
  const set = (vars: Record<string, string | undefined>) => {
    const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    Object.assign(process.env, vars);
    return () => {
      for (const [k, v] of Object.entries(before))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    };
  };

  it("passes none of the service's settings, no program switch and no trace to stderr", async () => {
    const restore = set({
      API_KEY: 'service-admin-key-0123456789',
      NATS_PASSWORD: 'nats-password-abcdef',
      GIT_SSH_COMMAND: 'touch /tmp/pwned',
      GIT_TRACE_CURL: '1',
      GIT_TRACE_REDACT: '0',
      GIT_TRACE2_EVENT: '1',
      LANG: 'C.UTF-8',
    });
    try {
      const env = await gitsEnvironment({ GIT_TERMINAL_PROMPT: '0' });
      for (const name of [
        'API_KEY',
        'NATS_PASSWORD',
        'GIT_SSH_COMMAND',
        'GIT_TRACE_CURL',
        'GIT_TRACE_REDACT',
        'GIT_TRACE2_EVENT',
      ])
        expect(env).not.toMatch(new RegExp(`^${name}=`, 'm'));
      expect(env).toMatch(/^PATH=/m);
      expect(env).toMatch(/^LANG=C\.UTF-8$/m);
      expect(env).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
    } finally {
      restore();
    }
  });

  it('passes the trace2 event log when it goes to a file', async () => {
    const restore = set({ GIT_TRACE2_EVENT: '/tmp/git-trace2-test.json' });
    try {
      expect(await gitsEnvironment()).toMatch(/^GIT_TRACE2_EVENT=\/tmp\/git-trace2-test\.json$/m);
    } finally {
      restore();
      rmSync('/tmp/git-trace2-test.json', { force: true });
    }
  });
});
