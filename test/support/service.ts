import type { INestApplication } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { JetStreamEventStore } from '#libs/event-store';
import { createServiceApp } from '../../src/app/service-app';
import { loadConfig } from '../../src/config/config';
import { Metrics } from '../../src/metrics/metrics';
import { tempDir } from './files';

export const API_KEY = 'test-api-key-0123456789abcdef';

/** The service's providers the tests look at directly. */
export interface ServiceInternals {
  store: JetStreamEventStore;
  ds: DataSource;
  metrics: Metrics;
}

export interface RunningService {
  runtime: ServiceInternals;
  app: INestApplication;
  base: string;
  stop(): Promise<void>;
}

/**
 * The real service in-process: real NATS, real PostgreSQL, real git, an HTTP port of its own. Its log goes
 * nowhere (TEST_LOG_LEVEL to stdout), or to `logFile` at debug level, for a test to show when it fails.
 */
export async function startService(
  env: Record<string, string>,
  opts: { logFile?: string } = {},
): Promise<RunningService> {
  const config = loadConfig({
    API_KEY,
    WORK_DIR: tempDir('work'),
    GIT_ALLOWED_SCHEMES: 'https,ssh,file',
    REGISTRY_SERVER: 'registry.test.example.com',
    REGISTRY_USERNAME: 'test-puller',
    REGISTRY_PASSWORD: 'TestRegistryPassword-5f6e7d8c9b',
    ACK_WAIT_SECONDS: '10',
    // What an EXECUTOR=kubernetes service writes into its Job specs; the tests' runners get the real URL.
    RUNNER_SERVICE_URL: 'http://gitops-scaffolder.kubeopera-system.svc:8080',
    // The namespace the tests' credentials and kubeconfig Secrets live in.
    SECRET_NAMESPACES: 'capi-clusters',
    ...env,
  });
  const logger = opts.logFile
    ? pino({ level: 'debug' }, pino.destination({ dest: opts.logFile, sync: true }))
    : pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const app = await createServiceApp(config, logger);
  await app.listen(0, '127.0.0.1');
  const runtime = {
    store: app.get(JetStreamEventStore),
    ds: app.get<DataSource>(getDataSourceToken()),
    metrics: app.get(Metrics),
  };
  const port = (app.getHttpServer().address() as any).port;
  return {
    runtime,
    app,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      await app.close();
    },
  };
}

export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(base + path, {
    method,
    headers: {
      'x-api-key': API_KEY,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Polls a run until it succeeded, failed or was cancelled; returns the run. Tolerates a service that is restarting. */
export function untilTerminal(base: string, id: string, ms = 60_000): Promise<any> {
  return waitFor(
    `run ${id} to finish`,
    async () => {
      const r = await api(base, 'GET', `/api/v1/scaffolds/${id}`).catch(() => undefined);
      return r && ['succeeded', 'failed', 'cancelled'].includes(r.json?.status) ? r.json : undefined;
    },
    ms,
  );
}

/** How many events the service's run stream holds (to prove that bad input appended nothing). */
export async function eventCount(svc: RunningService): Promise<number> {
  return (await svc.runtime.store.jsm.streams.info('SCAFFOLD_EVENTS')).state.messages;
}

/** How many messages each of the service's streams holds (to prove that something appended, purged or replaced nothing). */
export async function streamCounts(svc: RunningService): Promise<Record<'events' | 'logs' | 'inputs', number>> {
  const { jsm, streams } = svc.runtime.store;
  const count = async (stream: string) => (await jsm.streams.info(stream)).state.messages;
  return { events: await count(streams.events), logs: await count(streams.logs), inputs: await count(streams.inputs) };
}

/** NATS API requests the service dropped because their reply subject is not a caller inbox (all subjects). */
export async function refusedReplies(svc: RunningService): Promise<number> {
  return (await svc.runtime.metrics.natsRepliesRefused.get()).values.reduce((sum, v) => sum + v.value, 0);
}

/** The NATS request/reply API as a controller calls it: JSON bodies, the API key in a header. */
export async function natsApi(url: string) {
  const { connect } = await import('@nats-io/transport-node');
  const { headers } = await import('@nats-io/nats-core');
  const nc = await connect({ servers: url });
  return {
    async request(subject: string, payload: unknown, key = API_KEY, extra: Record<string, string> = {}): Promise<any> {
      const h = headers();
      h.set('X-Api-Key', key);
      for (const [name, value] of Object.entries(extra)) h.set(name, value);
      const m = await nc.request(subject, typeof payload === 'string' ? payload : JSON.stringify(payload), {
        timeout: 30_000,
        headers: h,
      });
      return {
        status: Number(m.headers?.get('Status-Code') || 200),
        json: JSON.parse(m.string()),
        retryAfter: m.headers?.get('Retry-After') || undefined,
      };
    },
    close: () => nc.close(),
  };
}
