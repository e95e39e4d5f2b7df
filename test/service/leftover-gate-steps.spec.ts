import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import type { ScaffoldRequestedData } from '#libs/events';
import { SHIPPED_PHASED_TEMPLATE } from '#libs/generator';
import { loadConfig } from '../../src/config/config';
import { localGitWorkspaces } from '../../src/git/git.module';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { bareRepo, gitLog } from '../support/services';
import { limeRequest, runStepsToEnd } from '../support/step-harness';

jest.setTimeout(180_000);

/** The phased platform reference's external-dns role, which names its cluster (`dev`): inherited when not given. */
const REFERENCE_ROLE = 'arn:aws:iam::111111111111:role/external-dns-dev';
const NEW_ROLE = 'arn:aws:iam::222222222222:role/external-dns-lime';

/**
 * The leftover gate in a run: the real step handlers on the in-memory event store, the shipped phased platform
 * reference, a real git remote. A request that leaves the reference's external-dns role in the new cluster's
 * cluster-vars (no EXTERNAL_DNS_ROLE_ARN given) is refused by default before anything is pushed; `replace` moves the
 * value; `strict: false` pushes it and the run log lists it.
 */
describe("a request's strict and replace in the run's passes", () => {
  const cert = makeRsaCert();
  const config = loadConfig(
    {
      TEMPLATE_DIR: SHIPPED_PHASED_TEMPLATE,
      REFERENCE_ENV: 'dev',
      WORK_DIR: tempDir('steps-leftovers-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
      REGISTRY_SERVER: 'r.example.com',
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: 'RegistryPassword-1',
    },
    { requireApiKey: false },
  );
  const workspaces = localGitWorkspaces(config);

  async function runToEnd(request: Partial<ScaffoldRequestedData>) {
    const remote = bareRepo();
    const run = await runStepsToEnd({
      settings: config.steps,
      workspaces,
      certPem: cert.certPem,
      request: limeRequest(remote.url, { cluster_vars: { CLUSTER_ISSUER: 'letsencrypt-prod' }, ...request }),
    });
    const log = (await run.logs.read(run.runId)).map((e) => `${e.level} ${e.msg}`);
    const clusterVars = () =>
      parse(
        execFileSync('git', ['--git-dir', remote.dir, 'show', 'main:clusters/lime/cluster-vars.yaml'], {
          encoding: 'utf8',
        }),
      );
    return { remote, events: run.events, log, clusterVars };
  }

  const LEFTOVER = `clusters/lime/cluster-vars.yaml: ConfigMap flux-system/cluster-vars data.EXTERNAL_DNS_ROLE_ARN names the reference's cluster-name "dev" (cluster_vars {"EXTERNAL_DNS_ROLE_ARN":"arn:aws:iam::111111111111:role/external-dns-lime"})`;

  it('strict (as the service records every request by default): the infra pass is refused naming file, object, field and the request field, nothing pushed', async () => {
    const { remote, events, log } = await runToEnd({ strict: true });
    expect(events.map((e) => e.type)).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
    const failed = events.at(-1)!.data as { step: string; reason: string };
    expect(failed.step).toBe('infra-pass');
    expect(failed.reason).toContain(
      "strict: the infra pass is refused before anything of it is pushed, as it leaves 1 identifier(s) of the reference in the new cluster's files: ",
    );
    expect(failed.reason).toContain(LEFTOVER);
    expect(failed.reason).toContain('or send strict: false');
    expect(log).toContain(`error infra pass: leftover ${LEFTOVER}`);
    expect(gitLog(remote.dir)).toHaveLength(1); // the seed commit only
  });

  it("replace rewrites the leftover in the new cluster's files, so the strict run goes through", async () => {
    const { events, log, clusterVars } = await runToEnd({ strict: true, replace: { [REFERENCE_ROLE]: NEW_ROLE } });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(clusterVars().data.EXTERNAL_DNS_ROLE_ARN).toBe(NEW_ROLE);
    expect(log.filter((l) => l.includes('leftover'))).toEqual([]);
  });

  it('strict: false pushes both passes and the run log lists the leftover of each', async () => {
    const { events, log, clusterVars } = await runToEnd({ strict: false });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(clusterVars().data.EXTERNAL_DNS_ROLE_ARN).toBe(REFERENCE_ROLE);
    expect(log).toEqual(
      expect.arrayContaining([`warn infra pass: leftover ${LEFTOVER}`, `warn full pass: leftover ${LEFTOVER}`]),
    );
  });
});
