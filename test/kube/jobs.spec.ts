import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatchV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  jobNameFor,
  OUTCOMES_PER_LIST,
  RUN_ID_LABEL,
  RUNNER_IMAGE,
  runnerSecretNameFor,
  ScaffoldJobs,
} from '#libs/kube';
import { FakeKube } from '../support/fake-kube';

const settings = {
  namespace: 'kubeopera-provisioning',
  image: RUNNER_IMAGE,
  serviceAccountName: 'gitops-scaffolder-runner',
  configMapName: 'gitops-scaffolder-runner',
  envSecretNames: ['gitops-scaffolder-runner'],
  gitSecretName: 'git-credentials',
  backoffLimit: 2,
  activeDeadlineSeconds: 3600,
  ttlSecondsAfterFinished: 86400,
  serviceUrl: 'http://gitops-scaffolder.kubeopera-system.svc:8080',
};
const runId = '11111111-2222-4333-8444-555555555555';

describe('Job per run in the provisioning namespace (test API server, production client)', () => {
  let fake: FakeKube;
  let jobs: ScaffoldJobs;
  let kc: KubeConfig;
  beforeEach(async () => {
    fake = await new FakeKube().start();
    kc = new KubeConfig();
    kc.loadFromString(fake.kubeconfig());
    jobs = new ScaffoldJobs(kc, settings);
  });
  afterEach(() => fake.stop());

  it('creates scaffold-<id> with limits, a non-root context, run labels and only references to secrets', async () => {
    const { adopted } = await jobs.ensureJob(runId);
    expect(adopted).toBe(false);
    const job = fake.jobs.get(`kubeopera-provisioning/${jobNameFor(runId)}`);
    expect(job.metadata.labels[RUN_ID_LABEL]).toBe(runId);
    expect(job.spec).toMatchObject({ backoffLimit: 2, activeDeadlineSeconds: 3600, ttlSecondsAfterFinished: 86400 });
    const pod = job.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    const c = pod.containers[0];
    expect(c.image).toBe(RUNNER_IMAGE);
    expect(c.image).toMatch(/:\d+\.\d+\.\d+$/);
    expect(c.command).toEqual(['scaffold-runner']);
    expect(c.args).toEqual(['--run', runId]);
    expect(c.resources.limits).toBeDefined();
    expect(c.resources.requests).toBeDefined();
    expect(c.env.map((e: any) => e.name).sort()).toEqual([
      'GIT_CREDENTIALS_DIR',
      'HOME',
      'RUNNER_TOKEN_FILE',
      'RUN_ID',
      'SCAFFOLDER_URL',
      'WORK_DIR',
    ]);
    // The runner reaches the service (no NATS identity) with the run's own credential, mounted from its Secret.
    expect(c.env).toContainEqual({ name: 'SCAFFOLDER_URL', value: settings.serviceUrl });
    expect(c.env).toContainEqual({ name: 'RUNNER_TOKEN_FILE', value: '/var/run/secrets/scaffolder/token' });
    expect(c.volumeMounts).toContainEqual({
      name: 'runner-credential',
      mountPath: '/var/run/secrets/scaffolder',
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({
      name: 'runner-credential',
      secret: { secretName: runnerSecretNameFor(runId), defaultMode: 0o400 },
    });
    expect(JSON.stringify(job)).not.toMatch(/nats/i);
    // The runner finds the mounted git Secret as its credentials folder.
    expect(c.env.find((e: any) => e.name === 'GIT_CREDENTIALS_DIR').value).toBe(
      c.volumeMounts.find((m: any) => m.name === 'git-credentials').mountPath,
    );
    expect(c.envFrom).toEqual([
      { configMapRef: { name: 'gitops-scaffolder-runner' } },
      { secretRef: { name: 'gitops-scaffolder-runner' } },
    ]);
    expect(pod.volumes).toContainEqual({
      name: 'git-credentials',
      secret: { secretName: 'git-credentials', defaultMode: 0o400 },
    });
    expect(pod.imagePullSecrets).toBeUndefined();
  });

  it('pulls a runner image from a private registry with the configured pull secrets', async () => {
    const withPull = new ScaffoldJobs(kc, { ...settings, imagePullSecretNames: ['registry-a', 'registry-b'] });
    await withPull.ensureJob(runId);
    const pod = fake.jobs.get(`kubeopera-provisioning/${jobNameFor(runId)}`).spec.template.spec;
    expect(pod.imagePullSecrets).toEqual([{ name: 'registry-a' }, { name: 'registry-b' }]);
  });

  it("creates the run's credential Secret owned by its Job, keeps the first token on a relaunch, and it goes with the Job", async () => {
    const { job } = await jobs.ensureJob(runId);
    expect(await jobs.ensureRunnerSecret(runId, job, 'first-token-0123456789abcdef')).toBe(
      'first-token-0123456789abcdef',
    );
    // A redelivered launch (or another replica) mints another token: the Secret's is kept, so the pod's stays valid.
    expect(await jobs.ensureRunnerSecret(runId, job, 'second-token-0123456789abcdef')).toBe(
      'first-token-0123456789abcdef',
    );
    const secret = fake.secrets.get(`kubeopera-provisioning/${runnerSecretNameFor(runId)}`);
    expect(secret.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: jobNameFor(runId),
        uid: job.metadata!.uid,
        controller: true,
      },
    ]);
    expect(secret.metadata.labels[RUN_ID_LABEL]).toBe(runId);
    // A Secret of that name that is not this run's credential is not used.
    secret.metadata.labels[RUN_ID_LABEL] = 'someone-else';
    await expect(jobs.ensureRunnerSecret(runId, job, 'third-token-0123456789abcdef')).rejects.toThrow(
      /not this run's runner credential/,
    );
    await kc
      .makeApiClient(BatchV1Api)
      .deleteNamespacedJob({ namespace: 'kubeopera-provisioning', name: jobNameFor(runId) });
    expect(fake.secrets.has(`kubeopera-provisioning/${runnerSecretNameFor(runId)}`)).toBe(false);
  });

  it('adopts an existing Job of the same run, refuses one of another run', async () => {
    await jobs.ensureJob(runId);
    expect((await jobs.ensureJob(runId)).adopted).toBe(true);
    fake.jobs.get(`kubeopera-provisioning/${jobNameFor(runId)}`).metadata.labels[RUN_ID_LABEL] = 'someone-else';
    await expect(jobs.ensureJob(runId)).rejects.toThrow(/belongs to another run/);
  });

  it('reads the outcomes of many runs with one list request per 50 runs, as outcome() reads each', async () => {
    const ids = Array.from(
      { length: OUTCOMES_PER_LIST + 10 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    for (const id of ids.slice(0, -1)) await jobs.ensureJob(id); // the last run has no Job
    const job = (id: string) => fake.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`);
    job(ids[0]).status = { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] };
    job(ids[OUTCOMES_PER_LIST + 1]).status = { conditions: [{ type: 'Complete', status: 'True' }] };
    // A Job labelled with a run under another name is not that run's Job (outcome() reads the run's Job by name).
    const impostor = structuredClone(job(ids[2]));
    impostor.metadata.name = 'scaffold-impostor';
    impostor.status = { conditions: [{ type: 'Failed', status: 'True', reason: 'Planted' }] };
    fake.jobs.delete(`kubeopera-provisioning/${jobNameFor(ids[2])}`);
    fake.jobs.set('kubeopera-provisioning/scaffold-impostor', impostor);
    fake.requests.length = 0;
    fake.labelSelectors.length = 0;

    const outcomes = await jobs.outcomes(ids);

    expect(fake.requests).toEqual([
      { method: 'GET', path: '/apis/batch/v1/namespaces/kubeopera-provisioning/jobs' },
      { method: 'GET', path: '/apis/batch/v1/namespaces/kubeopera-provisioning/jobs' },
    ]);
    // Each list names its runs (the server filters; the service does not read every Job of the namespace).
    expect(fake.labelSelectors).toEqual([
      expect.stringContaining(`${RUN_ID_LABEL} in (${ids.slice(0, OUTCOMES_PER_LIST).join(',')})`),
      expect.stringContaining(`${RUN_ID_LABEL} in (${ids.slice(OUTCOMES_PER_LIST).join(',')})`),
    ]);
    expect([...outcomes.keys()]).toEqual(ids);
    for (const id of ids) expect(outcomes.get(id)).toEqual(await jobs.outcome(id));
    expect(outcomes.get(ids[0])).toEqual({ state: 'failed', reason: 'Job condition Failed: DeadlineExceeded' });
    expect(outcomes.get(ids[1])).toEqual({ state: 'active' });
    expect(outcomes.get(ids[2])).toEqual({ state: 'missing' });
    expect(outcomes.get(ids[OUTCOMES_PER_LIST + 1])).toEqual({ state: 'succeeded' });
    expect(outcomes.get(ids.at(-1)!)).toEqual({ state: 'missing' });
  });

  it('reads the outcome and every container log of every attempt', async () => {
    expect(await jobs.outcome(runId)).toEqual({ state: 'missing' });
    await jobs.ensureJob(runId);
    expect(await jobs.outcome(runId)).toEqual({ state: 'active' });
    const job = fake.jobs.get(`kubeopera-provisioning/${jobNameFor(runId)}`);
    job.status = {
      failed: 3,
      conditions: [
        {
          type: 'Failed',
          status: 'True',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
        },
      ],
    };
    expect(await jobs.outcome(runId)).toEqual({
      state: 'failed',
      reason: 'Job condition Failed: BackoffLimitExceeded (Job has reached the specified backoff limit)',
    });
    for (const [i, name] of ['scaffold-a', 'scaffold-b'].entries()) {
      fake.pods.set(`kubeopera-provisioning/${name}`, {
        metadata: {
          name,
          namespace: 'kubeopera-provisioning',
          labels: { [RUN_ID_LABEL]: runId },
          creationTimestamp: `2026-01-01T00:0${i}:00Z`,
        },
        spec: { containers: [{ name: 'runner' }] },
        status: { containerStatuses: [{ name: 'runner', restartCount: i }] },
      });
      fake.podLogs.set(`kubeopera-provisioning/${name}/runner`, `attempt ${i} line 1\nattempt ${i} line 2\n`);
    }
    fake.podLogs.set('kubeopera-provisioning/scaffold-b/runner/previous', 'restarted container output\n');
    const logs = await jobs.logs(runId);
    expect(logs).toBe(
      '--- pod scaffold-a container runner ---\nattempt 0 line 1\nattempt 0 line 2\n' +
        '--- pod scaffold-b container runner (previous) ---\nrestarted container output\n' +
        '--- pod scaffold-b container runner ---\nattempt 1 line 1\nattempt 1 line 2\n',
    );
    expect(await jobs.logs(runId, 1)).toContain('attempt 1 line 2\n');
    expect(await jobs.logs(runId, 1)).not.toContain('attempt 1 line 1');
  });

  it('lists the attempts oldest first across a change of day (creationTimestamp is RFC 3339 text)', async () => {
    // A Sunday's late attempt and the Monday's retry, listed by the API server in another order.
    for (const [name, created] of [
      ['scaffold-retry', '2026-12-07T00:30:00Z'],
      ['scaffold-first', '2026-12-06T23:50:00Z'],
    ]) {
      fake.pods.set(`kubeopera-provisioning/${name}`, {
        metadata: {
          name,
          namespace: 'kubeopera-provisioning',
          labels: { [RUN_ID_LABEL]: runId },
          creationTimestamp: created,
        },
        spec: { containers: [{ name: 'runner' }] },
      });
      fake.podLogs.set(`kubeopera-provisioning/${name}/runner`, `${name}\n`);
    }
    expect((await jobs.pods(runId)).map((p) => p.metadata?.name)).toEqual(['scaffold-first', 'scaffold-retry']);
    expect(await jobs.logs(runId)).toBe(
      '--- pod scaffold-first container runner ---\nscaffold-first\n--- pod scaffold-retry container runner ---\nscaffold-retry\n',
    );
  });
});

describe('the runner image command line', () => {
  const runner = (...args: string[]) =>
    spawnSync(process.execPath, [join(__dirname, '../../bin/scaffold-runner'), ...args], { encoding: 'utf8' });

  it('answers --help (the image default command) and --version with exit 0, and a missing run id with usage and exit 2', () => {
    const help = runner('--help');
    expect([help.status, help.stdout]).toEqual([
      0,
      expect.stringMatching(
        /^usage: scaffold-runner --run RUN_ID\n[\s\S]*Options:\n {2}--run RUN_ID[\s\S]*SCAFFOLDER_URL/,
      ),
    ]);
    expect(runner('--version').stdout).toMatch(/^scaffold-runner \d+\.\d+\.\d+\n$/);
    const bare = runner();
    expect([bare.status, bare.stderr]).toEqual([2, expect.stringContaining('--run RUN_ID (a UUID) is required')]);
    // The image runs exactly this by default.
    expect(readFileSync(join(__dirname, '../../Dockerfile.runner'), 'utf8')).toMatch(
      /CMD \["scaffold-runner", "--help"\]/,
    );
  });
});
