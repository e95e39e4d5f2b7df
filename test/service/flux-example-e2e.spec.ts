import { execFileSync } from 'node:child_process';
import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { parse, parseAllDocuments } from 'yaml';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { EXAMPLE_ACME_EMAIL, EXAMPLE_HOSTS, writeFluxExampleReference } from '../support/flux-example-repo';
import { createBody } from '../support/run-fixtures';
import { bareRepo } from '../support/services';
import { api, API_KEY, eventCount, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

/** The service with a reference in the layout of Flux's example repository (ExternalArtifact variant), over REST and NATS. */
describe("scaffold service with a reference in the layout of Flux's example repository", () => {
  const stack = useServiceStack(() => {
    const reference = tempDir('fx-service-ref');
    writeFluxExampleReference(reference, { artifacts: true });
    return { TEMPLATE_DIR: reference, REFERENCE_ENV: 'staging' };
  });
  const cert = makeRsaCert();
  const remote = bareRepo();
  const body = (cluster: string, extra: Record<string, unknown> = {}) => ({
    ...createBody(cluster, remote.url, cert.certPem),
    host_map: { [EXAMPLE_HOSTS.podinfo]: `podinfo.${cluster}.example.com` },
    ...extra,
  });
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', remote.dir, ...args], { encoding: 'utf8' });

  it('REST: clusters/kiwi and apps/kiwi in the first pass, the shared folders copied as they are, the host map recorded', async () => {
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('kiwi'));
    expect(created.status).toBe(202);
    const done = await untilTerminal(stack.svc.base, created.json.id);
    expect(done.status).toBe('succeeded');

    const infraTree = git('ls-tree', '-r', '--name-only', done.infra_commit).split('\n').filter(Boolean);
    expect(infraTree).toEqual(
      expect.arrayContaining([
        'clusters/kiwi/artifacts.yaml',
        'clusters/kiwi/infrastructure.yaml',
        'clusters/kiwi/apps.yaml',
        'apps/kiwi/podinfo-values.yaml',
      ]),
    );
    // The fleet repository lacked the shared folders: copied from the reference byte for byte, and no other environment.
    expect(infraTree.filter((f) => f.startsWith('clusters/') && !f.startsWith('clusters/kiwi/'))).toEqual([]);
    expect(git('show', `${done.infra_commit}:infrastructure/configs/cluster-issuers.yaml`)).toContain(
      EXAMPLE_ACME_EMAIL,
    );
    const generator = parse(git('show', `${done.infra_commit}:clusters/kiwi/artifacts.yaml`));
    expect(generator.spec.artifacts[1].copy).toContainEqual({ from: '@monorepo/apps/kiwi/**', to: '@artifact/kiwi/' });
    const configs = parseAllDocuments(git('show', `${done.infra_commit}:clusters/kiwi/infrastructure.yaml`))
      .map((d) => d.toJS())
      .find((k) => k.metadata.name === 'infra-configs');
    expect(configs.spec.patches.map((p: any) => parse(p.patch))).toContainEqual([
      { op: 'replace', path: '/spec/acme/email', value: 'ops@example.com' },
    ]);
    const values = parse(git('show', `${done.infra_commit}:apps/kiwi/podinfo-values.yaml`));
    expect(values.spec.values.ingress.hosts[0].host).toBe('podinfo.kiwi.example.com');
    // Nothing holds a Secret in this layout: the full pass has nothing to add.
    expect(git('diff', '--name-only', done.infra_commit, done.full_commit).trim()).toBe('');

    const events = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items;
    expect(events[0].data.host_map).toEqual(body('kiwi').host_map);
  });

  it('NATS: the same request answers with a queued run that succeeds', async () => {
    const h = headers();
    h.set('X-Api-Key', API_KEY);
    const nc = await connect({ servers: stack.nats.url });
    const reply = JSON.parse(
      (await nc.request('scaffolds.v1.create', JSON.stringify(body('lime')), { timeout: 10_000, headers: h })).string(),
    );
    await nc.close();
    expect(reply.status).toBe('queued');
    expect((await untilTerminal(stack.svc.base, reply.id)).status).toBe('succeeded');
    expect(parse(git('show', 'main:apps/lime/podinfo-values.yaml')).spec.values.ingress.hosts[0].host).toBe(
      'podinfo.lime.example.com',
    );
  });

  it.each([
    [
      'no host map for a host outside the reference domain',
      { host_map: undefined },
      /^host_map: hosts with no place in the new cluster.*podinfo\.staging \(apps\/staging\/podinfo-values\.yaml/,
    ],
    [
      'a host the reference does not have',
      { host_map: { [EXAMPLE_HOSTS.podinfo]: 'p.plum.example.com', 'nope.staging': 'x.plum.example.com' } },
      /^host_map: nope\.staging: the reference environment has no host nope\.staging/,
    ],
    [
      'a malformed host',
      { host_map: { [EXAMPLE_HOSTS.podinfo]: 'not a host' } },
      /^host_map\.podinfo\.staging: "not a host" is not a lowercase host name/,
    ],
    ['a malformed reference domain', { reference_domain: '-bad-' }, /^reference_domain: must be a lowercase DNS name/],
  ])('refuses %s with 400, appending nothing', async (_what, extra, message) => {
    const before = await eventCount(stack.svc);
    const r = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('plum', extra));
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(message);
    expect(await eventCount(stack.svc)).toBe(before);
  });
});
