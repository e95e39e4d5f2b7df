import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { parse } from 'yaml';
import type { InMemoryRunInputs } from '#libs/event-store';
import { EventDraft, stamp, StoredEvent } from '#libs/events';
import { fold } from '#libs/run-decider';
import { parseSealingCertificate } from '#libs/sealing';
import { SEALING_CERT_INPUT } from '#libs/steps';
import { loadConfig } from '../../src/config/config';
import { localGitWorkspaces } from '../../src/git/git.module';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { bareRepo, gitLog } from '../support/services';
import { runStepsToEnd } from '../support/step-harness';
import { unsealManifest } from '../support/unseal';

jest.setTimeout(120_000);

/**
 * An attacker who can publish on a run's subject and write its inputs (e.g. an unauthenticated NATS):
 * the real step handlers, on the in-memory event store against real git remotes, with forged events
 * appended between the steps. The run's rules refuse them whatever NATS permits.
 */
describe('forged events cannot redirect a run or make it seal for another certificate', () => {
  const cert = makeRsaCert();
  const attackerCert = makeRsaCert();
  const config = loadConfig(
    {
      WORK_DIR: tempDir('forged-work'),
      GIT_ALLOWED_SCHEMES: 'https,ssh,file',
      REGISTRY_SERVER: 'r.example.com',
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: 'RegistryPassword-1',
    },
    { requireApiKey: false },
  );
  const settings = config.steps;
  const workspaces = localGitWorkspaces(config);

  /** Runs every step as events arrive; `attack` may append or write before each event is handled. */
  async function run(
    attack: (ctx: {
      runId: string;
      after: StoredEvent;
      forge: (draft: EventDraft) => Promise<void>;
      inputs: InMemoryRunInputs;
      attackerUrl: string;
    }) => Promise<void>,
  ) {
    const remote = bareRepo();
    const attackerRemote = bareRepo();
    const request = {
      cluster_name: 'victim',
      domain: 'victim.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@victim.example.com',
      repo_url: remote.url,
      branch: 'main',
      requested_by: 'default',
    };
    const { events } = await runStepsToEnd({
      settings,
      workspaces,
      certPem: cert.certPem,
      request,
      beforeEach: async ({ runId, store, inputs }, after) => {
        const forge = async (draft: EventDraft) => {
          const { lastSeq } = await store.readRun(runId);
          await store.append(runId, [stamp(draft, runId, randomUUID(), new Date(), null)], lastSeq);
        };
        await attack({ runId, after, forge, inputs, attackerUrl: attackerRemote.url });
      },
    });
    return { remote, attackerRemote, events, state: fold(events) };
  }

  const attackerRequest = (url: string): EventDraft => {
    const parsed = parseSealingCertificate(attackerCert.certPem);
    return {
      type: 'ScaffoldRequested',
      data: {
        cluster_name: 'victim',
        domain: 'attacker.example.com',
        region: 'eu-west-1',
        acme_email: 'x@attacker.example.com',
        repo_url: url,
        branch: 'main',
        requested_by: 'nobody',
        target: {
          kind: 'sealing_cert',
          fingerprint_sha256: parsed.fingerprintSha256,
          not_after: parsed.notAfter.toISOString(),
        },
      },
    };
  };
  const attackerCertFetched: EventDraft = {
    type: 'CertFetched',
    data: {
      fingerprint_sha256: parseSealingCertificate(attackerCert.certPem).fingerprintSha256,
      not_after: '2035-01-01T00:00:00.000Z',
    },
  };

  it('a second ScaffoldRequested and a CertFetched for the attacker: both refused, the run pushes to its own repository, sealed for its own certificate', async () => {
    const { remote, attackerRemote, events, state } = await run(async ({ after, forge, attackerUrl }) => {
      if (after.type === 'InfraPushed') await forge(attackerRequest(attackerUrl));
      if (after.type === 'SealedSecretsReady') await forge(attackerCertFetched);
    });
    expect(state.status).toBe('succeeded');
    expect(state.request?.repo_url).toBe(remote.url);
    expect(state.refused.map((r) => r.type)).toEqual(['ScaffoldRequested', 'CertFetched']);
    expect(state.refused[1].reason).toMatch(
      /^CertFetched for certificate [0-9a-f:]{16}… while the run's certificate is [0-9a-f:]{16}…$/,
    );
    expect(events.filter((e) => e.type === 'FullPushed')).toHaveLength(1);
    expect(gitLog(remote.dir)).toHaveLength(3);
    expect(gitLog(attackerRemote.dir)).toHaveLength(1);
    // The run's secrets open with the run's certificate's key, not the attacker's.
    const sealed = parse(
      execFileSync(
        'git',
        ['--git-dir', remote.dir, 'show', 'main:clusters/victim/database/postgresql-credentials.yaml'],
        { encoding: 'utf8' },
      ),
    );
    expect(unsealManifest(cert.privateKeyPem, sealed).password).toHaveLength(40);
    expect(() => unsealManifest(attackerCert.privateKeyPem, sealed)).toThrow();
  });

  it('a PEM swapped into the run inputs: the full pass refuses to seal for it and pushes nothing', async () => {
    const { remote, state } = await run(async ({ runId, after, inputs }) => {
      if (after.type === 'CertFetched') await inputs.put(runId, SEALING_CERT_INPUT, attackerCert.certPem);
    });
    expect(state.status).toBe('failed');
    expect(state.message).toMatch(
      /full-pass failed: the stored sealing certificate \([0-9a-f:]{16}…\) is not the one this run's events name/,
    );
    expect(gitLog(remote.dir)).toHaveLength(2);
  });
});
