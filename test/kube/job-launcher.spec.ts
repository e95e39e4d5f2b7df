import { randomUUID } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { ACK, InMemoryEventStore, InMemoryRunInputs } from '#libs/event-store';
import { jobNameFor, RUNNER_IMAGE, runnerSecretNameFor, ScaffoldJobs } from '#libs/kube';
import { RunCommands } from '#libs/run-decider';
import { JobLauncher } from '../../src/kubernetes/job-launcher';
import { RunnerCredentials } from '../../src/runner-api/runner-credentials';
import { FakeKube } from '../support/fake-kube';
import { SCAFFOLD_REQUEST } from '../support/run-fixtures';

const NAMESPACE = 'kubeopera-provisioning';

describe('JobLauncher: one Job per run, launched once (test API server, production client)', () => {
  let fake: FakeKube;
  let launcher: JobLauncher;
  let store: InMemoryEventStore;
  const runId = randomUUID();
  const requested = async () => [{ event: (await store.readRun(runId)).events[0], deliveryCount: 1 }];

  beforeEach(async () => {
    fake = await new FakeKube().start();
    const kc = new KubeConfig();
    kc.loadFromString(fake.kubeconfig());
    const jobs = new ScaffoldJobs(kc, {
      namespace: NAMESPACE,
      image: RUNNER_IMAGE,
      serviceAccountName: 'gitops-scaffolder-runner',
      configMapName: 'gitops-scaffolder-runner',
      envSecretNames: [],
      backoffLimit: 0,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: 600,
      serviceUrl: 'http://gitops-scaffolder:8080',
    });
    store = new InMemoryEventStore();
    const commands = new RunCommands(store);
    await commands.handle(runId, { type: 'RequestScaffold', data: SCAFFOLD_REQUEST });
    const credentials = new RunnerCredentials(new InMemoryRunInputs());
    launcher = new JobLauncher(store, commands, jobs, credentials, pino({ level: 'silent' }));
  });
  afterEach(() => fake.stop());

  it('adopts its own Job and keeps its credential when the event is delivered again', async () => {
    expect(await launcher.launch(await requested())).toEqual(ACK);
    const token = fake.secretValue(NAMESPACE, runnerSecretNameFor(runId), 'token');
    expect(await launcher.launch(await requested())).toEqual(ACK);
    expect(fake.jobs.has(`${NAMESPACE}/${jobNameFor(runId)}`)).toBe(true);
    expect(fake.secretValue(NAMESPACE, runnerSecretNameFor(runId), 'token')).toBe(token);
  });

  it('does not bring back a Job that was launched and then deleted (the watcher fails that run)', async () => {
    expect(await launcher.launch(await requested())).toEqual(ACK);
    fake.jobs.delete(`${NAMESPACE}/${jobNameFor(runId)}`);
    expect(await launcher.launch(await requested())).toEqual(ACK);
    expect(fake.jobs.has(`${NAMESPACE}/${jobNameFor(runId)}`)).toBe(false);
  });
});
