import { SHIPPED_PHASED_TEMPLATE } from '#libs/generator';
import { loadConfig } from '../../src/config/config';
import { localGitWorkspaces } from '../../src/git/git.module';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { bareRepo, gitLog } from '../support/services';
import { limeRequest, runStepsToEnd } from '../support/step-harness';

jest.setTimeout(180_000);

/**
 * The full pass rehearsed in the infra pass, in a run: the real step handlers on the in-memory event store, the
 * shipped phased platform, a real git remote. A service without registry settings cannot make the full pass's pull
 * secret: before the rehearsal its run pushed the infra pass and then failed in the full pass (a half-made cluster on
 * the branch Flux reads); now the infra pass is refused with the full pass's reason, and nothing is pushed.
 */
describe('a run whose full pass would be refused', () => {
  const config = loadConfig(
    {
      TEMPLATE_DIR: SHIPPED_PHASED_TEMPLATE,
      REFERENCE_ENV: 'dev',
      WORK_DIR: tempDir('steps-rehearsal-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
    },
    { requireApiKey: false },
  );

  it('fails in its infra pass with the full pass’s reason, before anything is pushed', async () => {
    const remote = bareRepo();
    const run = await runStepsToEnd({
      settings: config.steps,
      workspaces: localGitWorkspaces(config),
      certPem: makeRsaCert().certPem,
      request: limeRequest(remote.url, {
        strict: true,
        cluster_vars: {
          CLUSTER_ISSUER: 'letsencrypt-prod',
          EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::222222222222:role/external-dns-lime',
        },
      }),
    });
    expect(run.events.map((e) => e.type)).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
    const failed = run.events.at(-1)!.data as { step: string; reason: string };
    expect(failed.step).toBe('infra-pass');
    expect(failed.reason).toMatch(
      /^refused before the infra pass writes anything, as the full pass that follows it would be: clusters\/dev\/secrets\/registry-credentials\.yaml Secret registry-credentials is a registry pull secret: give REGISTRY_SERVER/,
    );
    expect(gitLog(remote.dir)).toHaveLength(1); // the seed commit only
  });
});
