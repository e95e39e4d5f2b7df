import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/config';
import { localGitWorkspaces } from '../../src/git/git.module';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { SUPPLIED_PLANTED, writeSuppliedReference } from '../support/reference-repos';
import { bareRepo, gitLog } from '../support/services';
import { runStepsToEnd } from '../support/step-harness';
import { unsealManifest } from '../support/unseal';

jest.setTimeout(120_000);

/**
 * The real step handlers, run one after the other on the in-memory event store against a real git
 * remote, with supplied credentials read from a (test) management-cluster Secret at the moment of use.
 */
describe('steps with supplied credentials from a credentials_secret', () => {
  const cert = makeRsaCert();
  const template = tempDir('steps-supplied');
  writeSuppliedReference(template);
  const TOKEN = 'IssuedByTheDnsProvider-7777';

  const config = loadConfig(
    {
      TEMPLATE_DIR: template,
      WORK_DIR: tempDir('steps-supplied-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
      REGISTRY_SERVER: 'r.example.com',
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: 'RegistryPassword-1',
    },
    { requireApiKey: false },
  );
  const settings = config.steps;
  const workspaces = localGitWorkspaces(config);

  async function runToEnd(credentials: Record<string, string>) {
    const remote = bareRepo();
    const reads: string[] = [];
    const source = {
      read: async (ref: { namespace: string; name: string }) => (
        reads.push(`${ref.namespace}/${ref.name}`),
        credentials
      ),
    };
    const { events } = await runStepsToEnd({
      settings,
      workspaces,
      certPem: cert.certPem,
      credentials: source,
      request: {
        cluster_name: 'sup',
        domain: 'sup.example.com',
        region: 'eu-west-1',
        acme_email: 'ops@sup.example.com',
        repo_url: remote.url,
        branch: 'main',
        requested_by: 't',
        credentials_secret: { namespace: 'capi-clusters', name: 'sup-credentials' },
      },
    });
    return { remote, reads, events };
  }

  it('seals the supplied token as given and rebuilds what is derived from it; the Secret is read at each pass', async () => {
    const { remote, reads, events } = await runToEnd({ 'data/dns-provider/api-token': TOKEN });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(reads).toEqual(['capi-clusters/sup-credentials', 'capi-clusters/sup-credentials']);
    const file = execFileSync(
      'git',
      ['--git-dir', remote.dir, 'show', 'main:clusters/sup/database/dns-provider.yaml'],
      { encoding: 'utf8' },
    );
    const values = unsealManifest(cert.privateKeyPem, parse(file));
    expect(values['api-token']).toBe(TOKEN);
    expect(values.webhook).toBe(`https://hooks.example.com/dns?token=${TOKEN}`);
    const history = execFileSync('git', ['--git-dir', remote.dir, 'log', '-p', '--all'], { encoding: 'utf8' });
    expect(history).not.toContain(TOKEN);
    expect(history).not.toContain(SUPPLIED_PLANTED);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it('fails the run in its infra pass, before anything is pushed, when the Secret lacks a supplied key', async () => {
    const { remote, events } = await runToEnd({ 'data/other/api-token': 'x' });
    expect(events.map((e) => e.type)).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
    const failed = events.find((e) => e.type === 'ScaffoldFailed');
    expect(JSON.stringify(failed)).toContain('data/dns-provider/api-token');
    expect(gitLog(remote.dir)).toHaveLength(1); // the seed commit only
  });
});
