import type { ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { JetStreamEventStore } from '../../libs/event-store/src';
import { parseEvent } from '../../libs/events/src';
import type { ScaffoldJobs } from '../../libs/kube/src';
import { KubeError } from '../../libs/kube/src/errors';
import { decide, fold, isTerminal } from '../../libs/run-decider/src';

export const LAUNCHER = 'job-launcher';

/**
 * EXECUTOR=kubernetes: ScaffoldRequested -> Job scaffold-<id> in the provisioning namespace. Creating
 * is idempotent (an existing Job of the run is adopted), so a redelivery or a second replica is harmless.
 * A launch that cannot succeed (403, a foreign Job of that name) fails the run with the reason.
 */
export class JobLauncher {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;

  constructor(private readonly store: JetStreamEventStore, private readonly jobs: ScaffoldJobs, private readonly logger: Logger) {}

  async start() {
    const consumer = await this.store.durableConsumer(LAUNCHER, { filterSubject: 'scaffold.run.>', ackWaitMs: 30_000, maxAckPending: 16 });
    this.messages = await consumer.consume({ max_messages: 16 });
    this.loop = (async () => {
      for await (const msg of this.messages!) {
        let event;
        try {
          event = parseEvent(msg.string(), msg.seq);
        } catch {
          msg.ack();
          continue;
        }
        if (event.type !== 'ScaffoldRequested') {
          msg.ack();
          continue;
        }
        const runId = event.run_id;
        try {
          if (isTerminal(fold((await this.store.readRun(runId)).events))) {
            msg.ack();
            continue;
          }
          const { adopted } = await this.jobs.ensureJob(runId);
          this.logger.info({ run_id: runId, event_id: event.id, adopted }, adopted ? 'adopted existing Job' : 'created Job');
          msg.ack();
        } catch (e) {
          const retryable = !(e instanceof KubeError) || e.retryable;
          this.logger.warn({ run_id: runId, err: (e as Error).message, retryable }, 'Job launch failed');
          if (retryable) {
            msg.nak(5000);
            continue;
          }
          await this.store.decideAndAppend(runId, (s) => (isTerminal(s) ? [] : decide({ type: 'FailStep', step: s.step ?? 'infra-pass', reason: (e as Error).message, retryable: false }, s)), { causationId: event.id });
          msg.ack();
        }
      }
    })();
  }

  async stop() {
    await this.messages?.close().catch(() => undefined);
    await this.loop?.catch(() => undefined);
  }
}
