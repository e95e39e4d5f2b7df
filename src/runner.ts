/**
 * scaffold-runner --run <id>: the Job side of EXECUTOR=kubernetes. The same step handlers as the
 * local executor, on durable consumers filtered to this run's subject (a restarted pod resumes from
 * the last acknowledged event), exiting once the run has a terminal event.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { JetStreamEventStore } from '../libs/event-store/src';
import { fold, isTerminal } from '../libs/run-decider/src';
import { LOCAL_STEP_HANDLERS, StepWorker, TargetClusters } from '../libs/steps/src';
import { loadConfig } from './config';
import { makeLogger } from './runtime';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function runOne(runId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const logger = makeLogger().child({ run_id: runId });
  const config = loadConfig(env, { requireApiKey: false });
  process.env.GIT_TERMINAL_PROMPT = '0';
  const nc = await connect({ servers: config.natsUrl, name: `scaffold-runner-${runId}`, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  const store = await JetStreamEventStore.open(nc, undefined, config.streamReplicas);
  // Kubernetes access only where the environment provides it (in a Job: the service account).
  const targets: TargetClusters | undefined = env.KUBERNETES_SERVICE_HOST || env.KUBECONFIG ? require('./run/kubernetes-executor').kubeTargets(config.steps, config.kubeconfigPath) : undefined;
  const workers = LOCAL_STEP_HANDLERS.map((h) => new StepWorker(store, h, config.steps, logger, runId, targets));
  try {
    const { events } = await store.readRun(runId);
    if (events.length === 0) throw new Error(`run ${runId} does not exist`);
    for (const w of workers) await w.start();
    logger.info('runner started');
    for (;;) {
      const state = fold((await store.readRun(runId)).events);
      if (isTerminal(state)) {
        logger.info({ status: state.status }, 'run reached a terminal event');
        return state.status;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    // The run is over: its per-run consumers have nothing left to deliver.
    const { events } = await store.readRun(runId).catch(() => ({ events: [] }));
    if (isTerminal(fold(events))) for (const w of workers) await store.deleteConsumer(w.durableName);
    await nc.drain().catch(() => undefined);
  }
}

export function main(argv: string[]): void {
  let runId: string | undefined;
  try {
    runId = parseArgs({ args: argv, options: { run: { type: 'string' } }, strict: true }).values.run ?? process.env.RUN_ID;
  } catch (e) {
    console.error(`scaffold-runner: ${(e as Error).message}`);
    process.exit(2);
  }
  if (!runId || !UUID.test(runId)) {
    console.error('scaffold-runner: --run <run id> (a UUID) is required');
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
