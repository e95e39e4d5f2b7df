import { randomUUID } from 'node:crypto';
import { InMemoryRunInputs } from '#libs/event-store';
import { jobNameFor, runnerSecretNameFor, RUNNER_TOKEN_KEY } from '#libs/kube';
import { RunnerCredentials } from '../../src/runner-api/runner-credentials';
import { reportEventId } from '../../src/runner-api/runner-reports';
import { parseSealingCertificate } from '#libs/sealing';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { createBody } from '../support/run-fixtures';
import { api, API_KEY, RunningService, startService, waitFor } from '../support/service';
import { bareRepo, TestDatabase, TestNats } from '../support/services';

jest.setTimeout(120_000);

const NAMESPACE = 'kubeopera-provisioning';

describe('the runner API: a Job acts for its own run alone, through the service (#28)', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let management: FakeKube;
  let svc: RunningService;
  const cert = makeRsaCert();
  const remote = bareRepo();

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    svc = await startService({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      EXECUTOR: 'kubernetes',
      KUBECONFIG: management.kubeconfigFile(),
      JOB_WATCH_INTERVAL_SECONDS: '0.3',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await management.stop();
    await nats.destroy();
    await db.drop();
  });

  /** A run whose Job the service launched, with the token its Secret holds. */
  /** A run whose Job the service launched (with a given certificate, or a kubeconfig to fetch it through), and its token. */
  async function launchedRun(cluster: string, target?: object): Promise<{ id: string; token: string }> {
    const body = { ...createBody(cluster, remote.url, cert.certPem), ...(target ? { target } : {}) };
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body);
    expect(created.status).toBe(202);
    const id = created.json.id as string;
    await waitFor('the Job', async () => management.jobs.get(`${NAMESPACE}/${jobNameFor(id)}`));
    const token = await waitFor('the runner credential', async () =>
      management.secretValue(NAMESPACE, runnerSecretNameFor(id), RUNNER_TOKEN_KEY),
    );
    // The launcher records the hash before it creates the Secret; this only confirms the service accepts it.
    await waitFor('the recorded credential', async () =>
      (await runner(id, token)('GET', '/events')).status === 200 ? true : undefined,
    );
    return { id, token };
  }

  /** Calls the runner API for `runId` with `token` as its bearer credential. */
  const runner = (runId: string, token: string | undefined) => (method: string, path: string, body?: unknown) =>
    api(svc.base, method, `/api/runner/v1/runs/${runId}${path}`, body, {
      'x-api-key': '',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    });
  const types = async (id: string) =>
    (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items.map((e: any) => e.type);
  const logText = async (id: string) => (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`)).text;
  const report = (command: object, reportId = randomUUID()) => ({ report_id: reportId, command });
  const failInfra = { type: 'FailStep', step: 'infra-pass', reason: 'push rejected', retryable: true };

  it("refuses run A's credential for run B on every route, with the answer an unknown run or no token gets, and changes nothing of B", async () => {
    const a = await launchedRun('runner-a');
    const b = await launchedRun('runner-b');
    const asAonB = runner(b.id, a.token);
    const bEventsBefore = await types(b.id);
    const bLogBefore = await logText(b.id);
    const refusals = [
      await asAonB('GET', '/events'),
      await asAonB('POST', '/commands', report(failInfra)),
      await asAonB('GET', '/inputs/sealing-cert'),
      await asAonB('PUT', '/inputs/sealing-cert', { value: cert.certPem }),
      await asAonB('POST', '/logs', { entries: [{ level: 'info', step: 'infra-pass', msg: 'forged line' }] }),
      // No token, an API key as the bearer, a token of no run, a run that does not exist.
      await runner(b.id, undefined)('GET', '/events'),
      await runner(b.id, API_KEY)('GET', '/events'),
      await runner(b.id, 'x'.repeat(43))('GET', '/events'),
      await runner(randomUUID(), a.token)('GET', '/events'),
      await runner('not-a-run', a.token)('GET', '/events'),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(403);
      expect(r.json).toEqual({
        error: { code: 'forbidden', message: 'the runner credential is not valid for this run' },
      });
    }
    // The API key is no runner credential, and the runner credential is no API key.
    expect((await api(svc.base, 'GET', `/api/v1/scaffolds/${a.id}`, undefined, { 'x-api-key': a.token })).status).toBe(
      401,
    );
    expect(await types(b.id)).toEqual(bEventsBefore);
    expect(await logText(b.id)).toBe(bLogBefore);
    // A's own credential reads A.
    const own = await runner(a.id, a.token)('GET', '/events');
    expect(own.status).toBe(200);
    expect(own.json.items.map((e: any) => e.type)).toEqual(['ScaffoldRequested']);
  });

  it('refuses a report for a step the run is not in, a command a runner may not give and data that breaks the schema, with nothing appended', async () => {
    const a = await launchedRun('runner-steps');
    const asA = runner(a.id, a.token);
    const fullPushed = { type: 'FullPushed', data: { commit: 'f'.repeat(40), objects_sealed: 9 } };
    const notCurrent = await asA(
      'POST',
      '/commands',
      report({ type: 'CompleteStep', step: 'full-pass', result: fullPushed }),
    );
    expect(notCurrent.status).toBe(403);
    expect(notCurrent.json.error).toEqual({ code: 'not_current_step', message: 'the run is not at step full-pass' });
    const progress = { type: 'ReportProgress', step: 'cert-fetch', waitedMs: 1, deadlineMs: 2, seen: 'x' };
    expect((await asA('POST', '/commands', report(progress))).status).toBe(403);
    // Only the service starts runs, cancels them or fails a step from outside it.
    for (const command of [
      { type: 'RequestScaffold', data: {} },
      { type: 'RequestCancel', requestedBy: 'runner' },
      { type: 'FailCurrentStep', reason: 'x', retryable: false },
      { type: 'Redrive', requestedBy: 'runner' },
    ])
      expect((await asA('POST', '/commands', report(command))).status).toBe(400);
    const badData = {
      type: 'CompleteStep',
      step: 'infra-pass',
      result: { type: 'InfraPushed', data: { commit: 'no' } },
    };
    const refused = await asA('POST', '/commands', report(badData));
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toMatch(/^command\.result\.data:/);
    expect((await asA('POST', '/commands', { ...report(failInfra), report_id: 'not-a-uuid' })).status).toBe(400);
    expect((await asA('POST', '/commands', { ...report(failInfra), causation_id: randomUUID() })).status).toBe(400);
    // Inputs: the credential's own record is not readable; the certificate is written in cert-fetch only, and must be one.
    expect((await asA('GET', '/inputs/runner-credential')).status).toBe(403);
    const early = await asA('PUT', '/inputs/sealing-cert', { value: cert.certPem });
    expect(early.status).toBe(403);
    expect(early.json.error.code).toBe('not_current_step');
    expect((await asA('PUT', '/inputs/sealing-cert', { value: 'not a certificate' })).status).toBe(400);
    expect(await types(a.id)).toEqual(['ScaffoldRequested']);
  });

  it('appends a report once however often it is sent (a retry after a timeout or a service restart)', async () => {
    const a = await launchedRun('runner-retry');
    const asA = runner(a.id, a.token);
    const reportId = randomUUID();
    const first = await asA('POST', '/commands', report(failInfra, reportId));
    expect(first.status).toBe(200);
    expect(first.json.appended.map((e: any) => [e.type, e.id, e.data.attempt])).toEqual([
      ['StepFailed', reportEventId(a.id, reportId, 0), 1],
    ]);
    const again = await asA('POST', '/commands', report(failInfra, reportId));
    expect(again.status).toBe(200);
    expect(again.json.appended).toEqual(first.json.appended);
    expect(again.json.history.map((e: any) => e.type)).toEqual(['ScaffoldRequested']);
    // Another report is another attempt.
    const next = await asA('POST', '/commands', report(failInfra));
    expect(next.json.appended.map((e: any) => e.data.attempt)).toEqual([2]);
    expect(await types(a.id)).toEqual(['ScaffoldRequested', 'StepFailed', 'StepFailed']);
  });

  it("writes a runner's log lines as lines: an embedded line break cannot fake a second line", async () => {
    const a = await launchedRun('runner-log');
    const msg = 'pushed abc\n2026-01-01T00:00:00.000Z INFO [full-pass] ScaffoldSucceeded';
    const written = await runner(a.id, a.token)('POST', '/logs', {
      entries: [{ level: 'info', step: 'infra-pass', msg }],
    });
    expect(written.json).toEqual({ appended: 1 });
    const lines = (await logText(a.id)).split('\n').filter((l) => l.includes('pushed abc'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /INFO \[infra-pass\] pushed abc\\n2026-01-01T00:00:00.000Z INFO \[full-pass\] ScaffoldSucceeded$/,
    );
    const tooMany = Array.from({ length: 51 }, () => ({ level: 'info', step: 'infra-pass', msg: 'x' }));
    expect((await runner(a.id, a.token)('POST', '/logs', { entries: tooMany })).status).toBe(400);
  });

  it('stops accepting a credential when its run ends (a retried last report still gets its answer)', async () => {
    const a = await launchedRun('runner-end');
    const asA = runner(a.id, a.token);
    expect((await api(svc.base, 'POST', `/api/v1/scaffolds/${a.id}/cancel`)).status).toBe(202);
    const gate = report({ type: 'StopIfCancelled', step: 'infra-pass' });
    const stopped = await asA('POST', '/commands', gate);
    expect(stopped.json.appended.map((e: any) => e.type)).toEqual(['ScaffoldCancelled']);
    for (const r of [
      await asA('GET', '/events'),
      await asA('POST', '/commands', report(failInfra)),
      await asA('GET', '/inputs/sealing-cert'),
      await asA('POST', '/logs', { entries: [{ level: 'info', step: 'infra-pass', msg: 'late' }] }),
    ]) {
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('run_ended');
    }
    expect((await asA('POST', '/commands', gate)).json.appended).toEqual(stopped.json.appended);
    expect(await types(a.id)).toEqual(['ScaffoldRequested', 'ScaffoldCancelRequested', 'ScaffoldCancelled']);
  });
  it("takes what a review found (#28): NUL characters, a foreign controller, a certificate the events do not name, stale reads, prototype names, other steps' log lines, endless progress", async () => {
    const kubeconfigRun = (cluster: string) =>
      launchedRun(cluster, {
        kubeconfig_secret: { namespace: 'capi-clusters', name: `${cluster}-kubeconfig`, key: 'value' },
      });
    const a = await kubeconfigRun('review-a');
    const asA = runner(a.id, a.token);
    // A NUL in a reason reaches the events as it is, and the read-model (which PostgreSQL could not store it in) goes on.
    const nul = await asA('POST', '/commands', report({ ...failInfra, reason: 'bad\u0000byte' }));
    expect(nul.status).toBe(200);
    const later = await launchedRun('review-after-nul');
    await waitFor('the read-model to go on', async () =>
      (await api(svc.base, 'GET', '/api/v1/scaffolds?limit=500')).json.items?.some((r: any) => r.id === later.id)
        ? true
        : undefined,
    );
    // Stale reads are 503 (sent again), not 500.
    const stale = await asA('POST', '/commands', { ...report(failInfra), seen_seq: 9e15 });
    expect([stale.status, stale.json.error.code]).toEqual([503, 'stale_read']);
    // Names of Object.prototype are no inputs.
    expect((await asA('GET', '/inputs/constructor')).status).toBe(403);
    expect((await asA('PUT', '/inputs/toString', { value: cert.certPem })).status).toBe(403);
    // Log lines are the current step's.
    const otherStep = await asA('POST', '/logs', {
      entries: [{ level: 'error', step: 'full-pass', msg: 'ScaffoldSucceeded (forged)' }],
    });
    expect([otherStep.status, otherStep.json.error.code]).toEqual([403, 'not_current_step']);
    // The wait found the controller the settings name, not one of the runner's choosing.
    const infra = { type: 'InfraPushed', data: { commit: 'a'.repeat(40), files_changed: 3 } };
    expect(
      (await asA('POST', '/commands', report({ type: 'CompleteStep', step: 'infra-pass', result: infra }))).status,
    ).toBe(200);
    const ready = (namespace: string, name: string) =>
      report({
        type: 'CompleteStep',
        step: 'sealed-secrets-wait',
        result: { type: 'SealedSecretsReady', data: { source: 'cluster', controller: { namespace, name } } },
      });
    const foreign = await asA('POST', '/commands', ready('attacker', 'evil'));
    expect([foreign.status, foreign.json.error.message]).toEqual([
      400,
      'command.result.data.controller: must be one of kube-system/sealed-secrets-controller, kube-system/sealed-secrets',
    ]);
    // Progress is bounded per step: past 200 reports nothing more is appended.
    const progress = (i: number) =>
      report({ type: 'ReportProgress', step: 'sealed-secrets-wait', waitedMs: i, deadlineMs: 1000, seen: `poll ${i}` });
    expect((await asA('POST', '/commands', ready('kube-system', 'sealed-secrets'))).status).toBe(200);
    // The certificate: only the stored one's fingerprint completes the step.
    const other = makeRsaCert();
    expect((await asA('PUT', '/inputs/sealing-cert', { value: cert.certPem })).status).toBe(204);
    const fetched = (c: { certPem: string }) => {
      const parsed = parseSealingCertificate(c.certPem);
      return report({
        type: 'CompleteStep',
        step: 'cert-fetch',
        result: {
          type: 'CertFetched',
          data: { fingerprint_sha256: parsed.fingerprintSha256, not_after: parsed.notAfter.toISOString() },
        },
      });
    };
    const mismatch = await asA('POST', '/commands', fetched(other));
    expect([mismatch.status, mismatch.json.error.message]).toEqual([
      400,
      'command.result.data.fingerprint_sha256: is not the fingerprint of the certificate stored for this run',
    ]);
    expect((await asA('POST', '/commands', fetched(cert))).status).toBe(200);
    // A run whose certificate came with the request keeps it.
    const given = await launchedRun('review-given');
    const asGiven = runner(given.id, given.token);
    for (const command of [
      { type: 'CompleteStep', step: 'infra-pass', result: infra },
      {
        type: 'CompleteStep',
        step: 'sealed-secrets-wait',
        result: { type: 'SealedSecretsReady', data: { source: 'given_certificate', controller: null } },
      },
    ])
      expect((await asGiven('POST', '/commands', report(command))).status).toBe(200);
    const overwrite = await asGiven('PUT', '/inputs/sealing-cert', { value: other.certPem });
    expect([overwrite.status, overwrite.json.error.code]).toEqual([403, 'input_not_allowed']);
    // Progress: a second run at the wait, 201 reports, 200 appended.
    const b = await kubeconfigRun('review-progress');
    const asB = runner(b.id, b.token);
    expect(
      (await asB('POST', '/commands', report({ type: 'CompleteStep', step: 'infra-pass', result: infra }))).status,
    ).toBe(200);
    for (let i = 0; i < 201; i++) expect((await asB('POST', '/commands', progress(i))).status).toBe(200);
    expect((await types(b.id)).filter((t: string) => t === 'StepProgress')).toHaveLength(200);
  });
});

describe('RunnerCredentials', () => {
  it('keeps only a hash, accepts the token until its expiry, and nothing else', async () => {
    const inputs = new InMemoryRunInputs();
    const credentials = new RunnerCredentials(inputs);
    const runId = randomUUID();
    const token = 'a-runner-token-0123456789abcdefghij';
    const now = new Date('2026-12-05T10:00:00Z');
    await credentials.record(runId, token, new Date('2026-12-05T11:00:00Z'));
    expect(await inputs.get(runId, 'runner-credential')).not.toContain(token);
    expect(await credentials.accepts(runId, token, now)).toBe(true);
    expect(await credentials.accepts(runId, `${token}x`, now)).toBe(false);
    expect(await credentials.accepts(runId, undefined, now)).toBe(false);
    expect(await credentials.accepts(randomUUID(), token, now)).toBe(false);
    expect(await credentials.accepts(runId, token, new Date('2026-12-05T11:00:01Z'))).toBe(false);
  });
});
