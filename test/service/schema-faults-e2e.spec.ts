/**
 * Issue #26 in the service: a reference whose tree the cluster would refuse fails the run's step with
 * the file, object and field (and the preview says the same), and nothing is pushed; a service that
 * cannot start kubectl fails the run instead of pushing an unvalidated tree. The full matrix of
 * faults and references runs through the command line (test/generator/schema-faults.spec.ts): both
 * call the same generate(), so here each fault runs once, spread over the references. The
 * sops-platform reference is left to the command line: its supplied DNS token makes every request
 * name a credentials Secret on a management cluster.
 */
import { execFileSync } from 'node:child_process';
import { makeRsaCert } from '../support/certs';
import { FAULTY_REFERENCES, faultRefusal, SCHEMA_FAULTS } from '../support/schema-faults';
import { api, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo } from '../support/services';
import { createBody } from '../support/run-fixtures';

jest.setTimeout(240_000);

const cert = makeRsaCert();
const commits = (dir: string) =>
  execFileSync('git', ['--git-dir', dir, 'rev-list', '--count', 'main'], { encoding: 'utf8' }).trim();

describe('a service that cannot start kubectl', () => {
  const stack = useServiceStack(() => ({ KUBECTL: '/nonexistent/bin/kubectl' }));

  it('without kubectl a run fails at its first pass and pushes nothing; the preview refuses too', async () => {
    const remote = bareRepo();
    const body = createBody('no-kubectl', remote.url, cert.certPem);
    const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body);
    expect(created.status).toBe(202);
    const done = await untilTerminal(stack.svc.base, created.json.id);
    expect([done.status, done.message]).toEqual([
      'failed',
      expect.stringMatching(/^infra-pass failed: kubectl not found: the tree cannot be validated/),
    ]);
    expect(commits(remote.dir)).toBe('1');
    const preview = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', body);
    expect([preview.status, preview.json.error.code, preview.json.error.message]).toEqual([
      422,
      'preview_failed',
      expect.stringMatching(/kubectl not found/),
    ]);
  });
});

describe('schema check in the service: refused runs and previews, nothing pushed', () => {
  // Each reference in its own service (TEMPLATE_DIR is the service's): the suite's first one is replaced.
  const stack = useServiceStack();
  const references = FAULTY_REFERENCES.filter((ref) => !ref.name.startsWith('sops-platform'));

  references.forEach((ref, r) => {
    // Every fault once, spread over the references.
    const faults = SCHEMA_FAULTS.filter((_, f) => f % references.length === r);
    it(`${ref.name}: ${faults.map((f) => f.name).join(', ')}: the step fails naming file, object and field; the preview shows it`, async () => {
      for (const fault of faults) {
        const reference = ref.write();
        fault.plant(reference, ref);
        await stack.svc.stop();
        stack.svc = await stack.start({ TEMPLATE_DIR: reference, REFERENCE_ENV: ref.referenceEnv });
        const svc = stack.svc;
        const remote = bareRepo();
        const cluster = `faulty-${r}`;
        const base = createBody(cluster, remote.url, cert.certPem);
        const body = { ...base, ...ref.requestFields, repo: { ...base.repo, ...ref.requestFields?.repo } };
        const expected = faultRefusal(fault, ref, cluster).message;

        const preview = await api(svc.base, 'POST', '/api/v1/scaffolds/preview', body);
        expect([preview.status, preview.json.error?.message]).toEqual([422, expect.stringMatching(expected)]);
        const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body);
        expect(created.status).toBe(202);
        const done = await untilTerminal(svc.base, created.json.id);
        expect([fault.name, done.status, done.message]).toEqual([
          fault.name,
          'failed',
          expect.stringMatching(new RegExp(`^infra-pass failed: .*${expected.source}`)),
        ]);
        expect(commits(remote.dir)).toBe('1');
      }
    });
  });
});
