/**
 * scaffold-runner --run <id>: the Job side of EXECUTOR=kubernetes. The same step processors as the
 * local executor, on durable consumers filtered to this run's subject (a restarted pod resumes from
 * the last acknowledged event), exiting once the run has a terminal event.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { JetStreamEventStore } from '../libs/event-store/src';
import { isRunId } from '../libs/events/src';
import { fold, isTerminal } from '../libs/run-decider/src';
import { RunnerModule } from './app/runner.module';
import { closeOnSignals } from './app/shutdown';
import { loadConfig } from './config/config';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import { makeLogger } from './logging/logger';
import { EventConsumerHost } from './event-store/event-consumer-host';
import { VERSION } from './version';

const USAGE = 'usage: scaffold-runner --run <run id> (or RUN_ID); --version, --help';

export async function runOne(runId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const config = loadConfig(env, { requireApiKey: false });
  const logger = makeLogger(config.logLevel).child({ run_id: runId });
  process.env.GIT_TERMINAL_PROMPT = '0';
  const app = await NestFactory.createApplicationContext(RunnerModule.forRoot(config, logger, runId), {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(NestPinoLogger));
  closeOnSignals(app, logger, 'scaffold-runner', config.shutdownGraceMs);
  const store = app.get(JetStreamEventStore);
  const steps = app.get(EventConsumerHost);
  try {
    if ((await store.readRun(runId)).events.length === 0) {
      await steps.retire();
      throw new Error(`run ${runId} does not exist`);
    }
    logger.info({ version: VERSION }, 'runner started');
    for (;;) {
      const state = fold((await store.readRun(runId)).events);
      if (isTerminal(state)) {
        logger.info({ status: state.status }, 'run reached a terminal event');
        await steps.retire();
        return state.status;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await app.close();
  }
}

export function main(argv: string[]): void {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: { run: { type: 'string' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
      strict: true,
    }).values;
  } catch (e) {
    console.error(`scaffold-runner: ${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help || values.version) {
    console.log(values.version ? VERSION : USAGE);
    process.exit(0);
  }
  const runId = values.run ?? process.env.RUN_ID;
  if (!isRunId(runId)) {
    console.error(`scaffold-runner: --run <run id> (a UUID) is required\n${USAGE}`);
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
