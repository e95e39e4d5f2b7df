import { randomUUID } from 'node:crypto';
import { InMemoryEventStore, InMemoryRunInputs, InMemoryRunLogStore } from '#libs/event-store';
import type { ScaffoldRequestedData, StoredEvent } from '#libs/events';
import type { TreeGenerator } from '#libs/generator';
import type { GitWorkspaces } from '#libs/git';
import { fold, isTerminal, RunCommands } from '#libs/run-decider';
import { parseSealingCertificate } from '#libs/sealing';
import {
  LOCAL_STEP_HANDLERS,
  SEALING_CERT_INPUT,
  StepProcessor,
  StepSettings,
  SuppliedCredentialsSource,
} from '#libs/steps';

/** A request of cluster `lime` into `repo_url`'s main branch, by key `t`: the step specs' own values added to it. */
export const limeRequest = (repo_url: string, extra: Partial<ScaffoldRequestedData> = {}) => ({
  cluster_name: 'lime',
  domain: 'lime.example.com',
  region: 'eu-west-1',
  acme_email: 'ops@lime.example.com',
  repo_url,
  branch: 'main',
  requested_by: 't',
  ...extra,
});

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export interface StepRun {
  runId: string;
  store: InMemoryEventStore;
  inputs: InMemoryRunInputs;
  logs: InMemoryRunLogStore;
}

export interface StepHarnessOptions {
  settings: StepSettings;
  /** The process's working copies (`localGitWorkspaces(config)`, as the service's git module makes them). */
  workspaces: GitWorkspaces;
  /** The request without its target: the run seals for `certPem`, given in the request. */
  request: Omit<ScaffoldRequestedData, 'target'>;
  certPem: string;
  credentials?: SuppliedCredentialsSource;
  generator?: TreeGenerator;
  /** Called before each new event is handed to the steps (an attacker's or another writer's move). */
  beforeEach?: (run: StepRun, event: StoredEvent) => Promise<void>;
}

/**
 * The real step handlers, run one after the other on the in-memory event store (each new event to
 * every step, as the durable consumers would deliver it) until the run is terminal.
 */
export async function runStepsToEnd(options: StepHarnessOptions): Promise<StepRun & { events: StoredEvent[] }> {
  const run: StepRun = {
    runId: randomUUID(),
    store: new InMemoryEventStore(),
    inputs: new InMemoryRunInputs(),
    logs: new InMemoryRunLogStore(),
  };
  const cert = parseSealingCertificate(options.certPem);
  await run.inputs.put(run.runId, SEALING_CERT_INPUT, options.certPem);
  const data: ScaffoldRequestedData = {
    ...options.request,
    target: {
      kind: 'sealing_cert',
      fingerprint_sha256: cert.fingerprintSha256,
      not_after: cert.notAfter.toISOString(),
    },
  };
  await new RunCommands(run.store).handle(run.runId, { type: 'RequestScaffold', data });
  const dependencies = {
    commands: new RunCommands(run.store),
    inputs: run.inputs,
    logs: run.logs,
    settings: options.settings,
    workspaces: options.workspaces,
    logger: silent,
    credentials: options.credentials,
    generator: options.generator,
  };
  const processors = LOCAL_STEP_HANDLERS.map((h) => new StepProcessor(h, dependencies));
  const seen = new Set<number>();
  for (let round = 0; round < 20 && !isTerminal(fold((await run.store.readRun(run.runId)).events)); round++) {
    for (const event of (await run.store.readRun(run.runId)).events.filter((e) => !seen.has(e.seq))) {
      seen.add(event.seq);
      await options.beforeEach?.(run, event);
      for (const p of processors) await p.handle([{ event, deliveryCount: 1 }]);
    }
  }
  return { ...run, events: (await run.store.readRun(run.runId)).events };
}
