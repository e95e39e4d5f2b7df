import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { parse } from 'yaml';
import { decideAndAppend, InMemoryEventStore, InMemoryRunInputs, InMemoryRunLogStore } from '../../libs/event-store/src';
import type { StoredEvent } from '../../libs/events/src';
import { decide, isTerminal, fold, runDecider } from '../../libs/run-decider/src';
import { parseSealingCertificate } from '../../libs/sealing/src';
import { LOCAL_STEP_HANDLERS, SEALING_CERT_INPUT, StepProcessor } from '../../libs/steps/src';
import { loadConfig } from '../../src/config/config';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { SUPPLIED_PLANTED, writeSuppliedReference } from '../support/reference-repos';
import { bareRepo, gitLog } from '../support/services';
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
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

  async function runToEnd(credentials: Record<string, string>) {
    const remote = bareRepo();
    const store = new InMemoryEventStore();
    const inputs = new InMemoryRunInputs();
    const runId = randomUUID();
    const parsed = parseSealingCertificate(cert.certPem);
    const settings = loadConfig(
      { TEMPLATE_DIR: template, WORK_DIR: tempDir('steps-supplied-work'), REGISTRY_SERVER: 'r.example.com', REGISTRY_USERNAME: 'u', REGISTRY_PASSWORD: 'RegistryPassword-1' },
      { requireApiKey: false },
    ).steps;
    await inputs.put(runId, SEALING_CERT_INPUT, cert.certPem);
    const data = {
      cluster_name: 'sup',
      domain: 'sup.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@sup.example.com',
      repo_url: remote.url,
      branch: 'main',
      requested_by: 't',
      target: { kind: 'sealing_cert' as const, fingerprint_sha256: parsed.fingerprintSha256, not_after: parsed.notAfter.toISOString() },
      credentials_secret: { namespace: 'capi-clusters', name: 'sup-credentials' },
    };
    await decideAndAppend(store, runId, runDecider, (s) => decide({ type: 'RequestScaffold', data }, s));
    const reads: string[] = [];
    const source = { read: async (ref: { namespace: string; name: string }) => (reads.push(`${ref.namespace}/${ref.name}`), credentials) };
    const processors = LOCAL_STEP_HANDLERS.map((h) => new StepProcessor(h, { store, inputs, logs: new InMemoryRunLogStore(), settings, logger: silent, credentials: source }));
    const seen = new Set<number>();
    for (let round = 0; round < 20 && !isTerminal(fold((await store.readRun(runId)).events)); round++) {
      const fresh = (await store.readRun(runId)).events.filter((e: StoredEvent) => !seen.has(e.seq));
      for (const event of fresh) {
        seen.add(event.seq);
        for (const p of processors) await p.handle([{ event, deliveryCount: 1 }]);
      }
    }
    return { remote, reads, events: (await store.readRun(runId)).events };
  }

  it('seals the supplied token as given and rebuilds what is derived from it; the Secret is read at each pass', async () => {
    const { remote, reads, events } = await runToEnd({ 'data/dns-provider/api-token': TOKEN });
    expect(events.at(-1)?.type).toBe('ScaffoldSucceeded');
    expect(reads).toEqual(['capi-clusters/sup-credentials', 'capi-clusters/sup-credentials']);
    const file = execFileSync('git', ['--git-dir', remote.dir, 'show', 'main:clusters/sup/database/dns-provider.yaml'], { encoding: 'utf8' });
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
