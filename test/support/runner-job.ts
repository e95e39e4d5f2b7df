import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerSecretNameFor, RUNNER_TOKEN_KEY } from '../../libs/kube/src';
import type { FakeKube } from './fake-kube';
import { childEnv, tempDir } from './files';
import { waitFor } from './service';

const RUNNER = join(__dirname, '../../bin/scaffold-runner');

/**
 * The run's credential as its Job mounts it: the token in the Secret the service created beside the Job,
 * written to a file, with the service's URL (what the Job spec gives the runner).
 */
export async function runnerAccess(
  management: FakeKube,
  runId: string,
  serviceUrl: string,
  namespace = 'kubeopera-provisioning',
): Promise<{ SCAFFOLDER_URL: string; RUNNER_TOKEN_FILE: string }> {
  const token = await waitFor('the runner credential Secret', async () =>
    management.secretValue(namespace, runnerSecretNameFor(runId), RUNNER_TOKEN_KEY),
  );
  const file = join(tempDir('runner-credential'), RUNNER_TOKEN_KEY);
  writeFileSync(file, token, { mode: 0o400 });
  return { SCAFFOLDER_URL: serviceUrl, RUNNER_TOKEN_FILE: file };
}

/** Runs a scaffold Job's container command as a real process, with the environment the Job would give it. */
export function runJob(runId: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUNNER, '--run', runId], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}
