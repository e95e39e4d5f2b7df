import { execFileSync } from 'node:child_process';
import { connect } from '@nats-io/transport-node';
import { headers, NatsConnection } from '@nats-io/nats-core';
import { parse, parseAllDocuments } from 'yaml';
import { SHIPPED_PHASED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { SHIPPED_PLANTED, withBase64 } from '../support/planted';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { bareRepo } from '../support/services';
import { api, API_KEY, eventCount, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { unsealManifest } from '../support/unseal';
import { SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';

jest.setTimeout(120_000);

/** The service configured with the phased platform reference (cluster-vars model), over REST and NATS. */
describe('scaffold service with a cluster-vars reference (phased platform)', () => {
  const stack = useServiceStack(() => ({ TEMPLATE_DIR: SHIPPED_PHASED_TEMPLATE, REFERENCE_ENV: 'dev' }));
  let nc: NatsConnection;
  const cert = makeRsaCert();
  const remote = bareRepo();
  const body = (cluster: string, extra: Record<string, unknown> = {}) => ({
    cluster_name: cluster,
    domain: `${cluster}.example.org`,
    region: 'ap-southeast-2',
    acme_email: 'ops@example.org',
    repo: { url: remote.url, branch: 'main' },
    target: { sealing_cert_pem: cert.certPem },
    cluster_vars: {
      CLUSTER_ISSUER: 'letsencrypt-prod',
      EXTERNAL_DNS_ROLE_ARN: `arn:aws:iam::444444444444:role/dns-${cluster}`,
      POSTGRES_STORAGE_SIZE: '80Gi',
    },
    ...extra,
  });
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', remote.dir, ...args], { encoding: 'utf8' });
  const streamCount = () => eventCount(stack.svc);

  beforeAll(async () => {
    nc = await connect({ servers: stack.nats.url });
  });

  afterAll(async () => {
    await nc?.close();
  });

  it('REST, sealed-secrets: first pass only the secret-free phases, then the secrets and the rest; cluster_vars recorded', async () => {
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('kiwi'));
    expect(created.status).toBe(202);
    const done = await untilTerminal(stack.svc.base, created.json.id);
    expect(done.status).toBe('succeeded');

    const infraTree = git('ls-tree', '-r', '--name-only', done.infra_commit, 'clusters/kiwi');
    expect(infraTree).toContain('clusters/kiwi/cluster-vars.yaml');
    expect(infraTree).not.toContain('secrets');
    const infraRoot = parse(git('show', `${done.infra_commit}:clusters/kiwi/kustomization.yaml`));
    expect(infraRoot.resources).toContain('../../platform/sealed-secrets');
    expect(infraRoot.resources).not.toContain('../base');

    const vars = parse(git('show', `${done.full_commit}:clusters/kiwi/cluster-vars.yaml`)).data;
    expect(vars).toMatchObject({
      CLUSTER_NAME: 'kiwi',
      CLUSTER_DOMAIN: 'kiwi.example.org',
      CLUSTER_REGION: 'ap-southeast-2',
      ACME_EMAIL: 'ops@example.org',
      CLUSTER_ISSUER: 'letsencrypt-prod',
      POSTGRES_STORAGE_SIZE: '80Gi',
    });
    expect(parse(git('show', `${done.full_commit}:clusters/kiwi/kustomization.yaml`)).resources).toEqual([
      'flux-system',
      'cluster-vars.yaml',
      'secrets.yaml',
      '../base',
    ]);
    const sealed = parseAllDocuments(
      git('show', `${done.full_commit}:clusters/kiwi/secrets/postgresql-credentials.yaml`),
    ).map((d) => d.toJS())[0];
    expect(unsealManifest(cert.privateKeyPem, sealed).password).toHaveLength(40);
    // The shared platform is the template's: the run changed nothing outside the cluster folder but copied what was missing.
    expect(
      git('diff', '--name-only', done.infra_commit, done.full_commit)
        .split('\n')
        .filter(Boolean)
        .every((f) => f.startsWith('clusters/kiwi/')),
    ).toBe(true);
    const everything = git('log', '-p', 'main');
    for (const p of withBase64(SHIPPED_PLANTED)) expect(everything).not.toContain(p);

    const events = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items;
    expect(events.map((e: any) => e.type)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(events[0].data.cluster_vars).toEqual(body('kiwi').cluster_vars);
  });

  it('NATS, SOPS: the same model with age recipients, opened with the age command line', async () => {
    const age = ageIdentity();
    const h = headers();
    h.set('X-Api-Key', API_KEY);
    // No EXTERNAL_DNS_ROLE_ARN: the reference's is inherited; it names the reference cluster (`dev`), a leftover.
    const request = body('lime', {
      secrets_backend: 'sops',
      target: { age_recipients: [age.recipient] },
      cluster_vars: { CLUSTER_ISSUER: 'letsencrypt-prod' },
    });
    const leftover = `clusters/lime/cluster-vars.yaml: ConfigMap flux-system/cluster-vars data.EXTERNAL_DNS_ROLE_ARN names the reference's cluster-name "dev" (cluster_vars {"EXTERNAL_DNS_ROLE_ARN":"arn:aws:iam::111111111111:role/external-dns-lime"})`;
    // Strict by default: the preview lists the leftover in a request's words and says a run would be refused.
    const preview = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', request);
    expect(preview.status).toBe(200);
    expect(preview.json.summary.leftovers).toEqual([
      expect.objectContaining({ field: 'data.EXTERNAL_DNS_ROLE_ARN', identifier: 'cluster-name', matched: 'dev' }),
    ]);
    expect(preview.json.strict_refusal).toContain(leftover);
    // ...and the run is refused in its infra pass, nothing pushed.
    const head = git('rev-parse', 'main');
    const refused = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', request);
    const failed = await untilTerminal(stack.svc.base, refused.json.id);
    expect([failed.status, failed.step]).toEqual(['failed', 'infra-pass']);
    expect(failed.message).toContain(leftover);
    expect(git('rev-parse', 'main')).toBe(head);
    // strict: false (over NATS): pushed, and the run's log lists the leftover.
    const reply = JSON.parse(
      (
        await nc.request('scaffolds.v1.create', JSON.stringify({ ...request, strict: false }), {
          timeout: 10_000,
          headers: h,
        })
      ).string(),
    );
    expect(reply.status).toBe('queued');
    const done = await untilTerminal(stack.svc.base, reply.id);
    expect(done.status).toBe('succeeded');
    const secretsSync = parse(git('show', `${done.full_commit}:clusters/lime/secrets.yaml`));
    expect(secretsSync.spec.decryption).toEqual({ provider: 'sops', secretRef: { name: 'sops-age' } });
    const opened = sopsOpen(
      parse(git('show', `${done.full_commit}:clusters/lime/secrets/rabbitmq-credentials.yaml`)),
      age.keyFile,
    );
    expect(opened.macOk).toBe(true);
    expect(opened.plain.stringData.password).toHaveLength(40);
    const log = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${reply.id}/logs`);
    expect(log.text).toMatch(
      /infra-pass.*cluster-vars EXTERNAL_DNS_ROLE_ARN keeps the reference's value "arn:aws:iam::111111111111:role\/external-dns-dev"/,
    );
    expect(log.text).toContain(`infra pass: leftover ${leftover}`);
    expect(log.text).toContain(`full pass: leftover ${leftover}`);
  });

  it.each([
    [
      'a name no component uses',
      { NOT_A_VAR: 'x' },
      /^cluster_vars\.NOT_A_VAR: the reference's cluster-vars has no NOT_A_VAR/,
    ],
    [
      'a value with a line break (YAML injection into every component)',
      { CLUSTER_ISSUER: 'x\n  evil: true' },
      /^cluster_vars\.CLUSTER_ISSUER: the value must not contain line breaks/,
    ],
    ['a name Flux does not accept', { 'bad-name': 'x' }, /^cluster_vars\.bad-name: not a Flux variable name/],
    ['a value that is not a string', { API_REPLICAS: 3 }, /^cluster_vars\.API_REPLICAS: must be string/],
  ])('refuses cluster_vars with %s, appending nothing', async (_what, clusterVars, message) => {
    const before = await streamCount();
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('plum', { cluster_vars: clusterVars }));
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(message);
    expect(await streamCount()).toBe(before);
  });
});
