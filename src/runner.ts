/**
 * scaffold-runner --run <id>: the Job side of EXECUTOR=kubernetes. The same step processors as the
 * local executor, reading the run and reporting each step through the service's runner API with the
 * run's own credential (SCAFFOLDER_URL, RUNNER_TOKEN_FILE); it has no NATS login. Exits 0 once the
 * run has ended; a restarted pod picks the run up where the service's events say it is.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import { isRunId } from '#libs/events';
import { RunnerModule } from './app/runner.module';
import { closeOnSignals } from './app/shutdown';
import { loadConfig } from './config/config';
import { makeLogger } from './logging/logger';
import type { RunnerApiSettings } from './runner/runner-api-client';
import { RunnerSteps } from './runner/runner-steps';
import { commandCompletion, parseCommandLine, UsageError, versionLine } from '#libs/cli';
import { VERSION } from '#libs/cli/version';

/** The runner's options (parseArgs's table; the shell completion reads it with the option lines of USAGE). */
const OPTIONS = {
  run: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

const USAGE = `usage: scaffold-runner --run RUN_ID

Runs the steps of one run as a Kubernetes Job of the service (EXECUTOR=kubernetes) and exits 0 once it has ended.

Options:
  --run RUN_ID      the run (a UUID; default RUN_ID)
  -h, --help        this text
  --version         the version
  completion bash|zsh|fish
                    (instead of options) the shell completion script

Environment:
  SCAFFOLDER_URL    the service's URL (http or https, without credentials)
  RUNNER_TOKEN_FILE the file holding the run's own credential
  RUN_ID            the run, when --run is not given
  LOG_LEVEL         and the service's settings the steps read (see docs/configuration.md)

Exit codes: 0 the run has ended (or the runner was stopped), 1 an error, 2 bad arguments.`;

/** `scaffold-runner completion bash|zsh|fish`. */
export const completion = commandCompletion('scaffold-runner', OPTIONS, USAGE);

/** Where the service is and the run's credential, from the Job's environment. */
export function runnerApiSettings(runId: string, env: NodeJS.ProcessEnv): RunnerApiSettings {
  const baseUrl = env.SCAFFOLDER_URL ?? '';
  if (!/^https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?$/.test(baseUrl))
    throw new Error('SCAFFOLDER_URL must be the http(s) URL of the service, without credentials');
  if (!env.RUNNER_TOKEN_FILE) throw new Error("RUNNER_TOKEN_FILE must name the file holding the run's credential");
  let token: string;
  try {
    token = readFileSync(env.RUNNER_TOKEN_FILE, 'utf8').trim();
  } catch {
    throw new Error(`RUNNER_TOKEN_FILE: ${env.RUNNER_TOKEN_FILE} cannot be read`);
  }
  return { baseUrl, runId, token };
}

export async function runOne(runId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const config = loadConfig(env, { requireApiKey: false });
  const api = runnerApiSettings(runId, env);
  const logger = makeLogger(config.logLevel).child({ run_id: runId });
  process.env.GIT_TERMINAL_PROMPT = '0';
  const app = await NestFactory.createApplicationContext(RunnerModule.forRoot(config, logger, api), {
    bufferLogs: true,
    abortOnError: false,
    // A failure to start is the one line main() prints, not the framework's stack first.
    logger: false,
  });
  app.useLogger(app.get(NestPinoLogger));
  const stopping = new AbortController();
  process.once('SIGTERM', () => stopping.abort());
  closeOnSignals(app, logger, 'scaffold-runner', config.shutdownGraceMs);
  try {
    logger.info({ version: VERSION }, 'runner started');
    const outcome = await app.get(RunnerSteps).drive(stopping.signal);
    logger.info({ outcome }, outcome === 'stopped' ? 'runner stopped before the run ended' : 'the run has ended');
    return outcome;
  } finally {
    await app.close();
  }
}

export function main(argv: string[]): void {
  let values;
  try {
    if (argv[0] === 'completion') {
      process.stdout.write(completion(argv[1]));
      process.exit(0);
    }
    values = parseCommandLine(argv, OPTIONS, false).values;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`scaffold-runner: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help || values.version) {
    console.log(values.version ? versionLine('scaffold-runner') : USAGE);
    process.exit(0);
  }
  const runId = values.run ?? process.env.RUN_ID;
  if (!isRunId(runId)) {
    console.error(`scaffold-runner: --run RUN_ID (a UUID) is required\n${USAGE}`);
    process.exit(2);
  }
  runOne(runId).then(
    () => process.exit(0),
    (e) => {
      console.error(`scaffold-runner: ${e.message}`);
      process.exit(1);
    },
  );
}

if (require.main === module) main(process.argv.slice(2));
