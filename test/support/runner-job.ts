import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { childEnv } from './files';

const RUNNER = join(__dirname, '../../bin/scaffold-runner');

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
