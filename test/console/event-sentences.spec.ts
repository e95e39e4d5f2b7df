import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { EVENT_TYPES } from '#libs/events';
import { EVENT_SENTENCES, eventSentence } from '../../src/common/texts/event-sentences';
import { progressLine } from '../../src/ctl/run-text';
import { eventSummary } from '../../src/console/ui/format';
import type { RunEvent } from '../../src/console/ui/api';

const root = join(__dirname, '../..');
const SENTENCES = 'src/common/texts/event-sentences.ts';

/** An event as both the console and scaffolderctl receive it from the API. */
const event = (type: string, data: Record<string, unknown>): RunEvent => ({
  seq: 1,
  id: '00000000-0000-4000-8000-000000000000',
  type,
  schema_version: 2,
  time: '2026-01-01T10:00:41.000Z',
  causation_id: null,
  data,
});

const COMMIT = '1a2b3c4d5e6f'.padEnd(40, '0');

/** What each event says, in the terminal and in the console alike: one sentence per type of the catalogue. */
const SAID: Array<[string, RunEvent, string]> = [
  [
    'a run requested',
    event('ScaffoldRequested', {
      cluster_name: 'acme-prod',
      domain: 'acme.io',
      region: 'eu-west-1',
      repo_url: 'https://git.example.com/platform/fleet.git',
      branch: 'main',
      requested_by: 'controller',
      target: { kind: 'kubeconfig_secret', namespace: 'clusters', name: 'acme-prod', key: 'value' },
    }),
    'cluster acme-prod (acme.io, eu-west-1) into https://git.example.com/platform/fleet.git main, requested by controller',
  ],
  [
    'an infrastructure pass that pushed',
    event('InfraPushed', { commit: COMMIT, files_changed: 14 }),
    'infra pass pushed 1a2b3c4d5e6f (14 files)',
  ],
  [
    'an infrastructure pass that pushed nothing',
    event('InfraPushed', { commit: COMMIT, files_changed: 0, unchanged: true }),
    'infrastructure already on the branch: nothing pushed (at 1a2b3c4d5e6f)',
  ],
  [
    'a certificate given in the request: no controller was checked',
    event('SealedSecretsReady', { source: 'given_certificate', controller: null }),
    'no controller checked: the request gave the sealing certificate',
  ],
  [
    'a version 1 event of a given certificate (no controller field)',
    event('SealedSecretsReady', { source: 'given_certificate' }),
    'no controller checked: the request gave the sealing certificate',
  ],
  [
    'the controller found Available, by name',
    event('SealedSecretsReady', {
      source: 'cluster',
      controller: { namespace: 'kube-system', name: 'sealed-secrets' },
    }),
    'sealed-secrets controller kube-system/sealed-secrets is ready',
  ],
  [
    'the certificate fetched',
    event('CertFetched', { fingerprint_sha256: 'ab:cd:ef:01:23:45:67:89:ab', not_after: '2027-12-02T10:00:00.000Z' }),
    'sealing certificate ab:cd:ef:01:23:4… fetched (valid until 2027-12-02T10:00:00.000Z)',
  ],
  [
    'a full pass that pushed',
    event('FullPushed', { commit: COMMIT, objects_sealed: 3 }),
    'full pass pushed 1a2b3c4d5e6f (3 objects sealed)',
  ],
  [
    'a full pass that pushed nothing',
    event('FullPushed', { commit: COMMIT, objects_sealed: 3, unchanged: true }),
    'full tree already on the branch: nothing pushed (at 1a2b3c4d5e6f)',
  ],
  [
    "a step of a run plan whose result carries nothing but what it saw (any plan's step, by its name)",
    event('StepCompleted', { step: 'flux-ready-wait', summary: 'Kustomization infrastructure Ready at 1a2b3c4d5e6f' }),
    'flux-ready-wait done: Kustomization infrastructure Ready at 1a2b3c4d5e6f',
  ],
  [
    'the run succeeded',
    event('ScaffoldSucceeded', { infra_commit: COMMIT, full_commit: '7a8b9c0d1e2f'.padEnd(40, '0') }),
    'succeeded (infra 1a2b3c4d5e6f, full 7a8b9c0d1e2f)',
  ],
  [
    'a step failed and will be tried again',
    event('StepFailed', { step: 'full-pass', attempt: 2, reason: 'push refused', will_retry: true }),
    'full-pass failed (attempt 2): push refused; will retry',
  ],
  [
    'the run failed',
    event('ScaffoldFailed', { step: 'infra-pass', reason: 'the branch does not exist on the remote' }),
    'failed at infra-pass: the branch does not exist on the remote',
  ],
  ['a cancel requested', event('ScaffoldCancelRequested', { requested_by: 'ops' }), 'cancel requested by ops'],
  ['cancelled at a step', event('ScaffoldCancelled', { step: 'cert-fetch' }), 'cancelled at cert-fetch'],
  ['cancelled before any step', event('ScaffoldCancelled', { step: null }), 'cancelled'],
  [
    "a long step's progress",
    event('StepProgress', {
      step: 'sealed-secrets-wait',
      waited_ms: 125_000,
      deadline_ms: 1_200_000,
      seen: 'Deployment kube-system/sealed-secrets: 0 of 1 replicas available',
    }),
    'sealed-secrets-wait: waited 2 min 5 s of 20 min 0 s (Deployment kube-system/sealed-secrets: 0 of 1 replicas available)',
  ],
  [
    'a step re-driven',
    event('StepRedriveRequested', { step: 'cert-fetch', requested_by: 'stall-check' }),
    'cert-fetch re-driven by stall-check',
  ],
  [
    'a pass proposed as a merge request',
    event('MergeRequestOpened', {
      step: 'infra-request',
      pass: 'infra',
      commit: 'c'.repeat(40),
      files_changed: 14,
      objects_sealed: 0,
      request: {
        number: 7,
        url: 'https://forge.example/fleet/pull/7',
        head: 'scaffolder/acme-prod/scaffold-infra/r1',
        base: 'main',
      },
    }),
    'infra pass pushed cccccccccccc to scaffolder/acme-prod/scaffold-infra/r1; merge request #7 open: https://forge.example/fleet/pull/7',
  ],
  [
    'a pass the branch already held, with no merge request',
    event('MergeRequestOpened', {
      step: 'full-request',
      pass: 'full',
      commit: 'd'.repeat(40),
      files_changed: 0,
      objects_sealed: 0,
      unchanged: true,
    }),
    'full pass already on the branch: no merge request needed (at dddddddddddd)',
  ],
  [
    'a merge request merged after a person pushed to its branch',
    event('MergeRequestMerged', {
      step: 'infra-merge',
      pass: 'infra',
      merge_commit: 'e'.repeat(40),
      edited: true,
      request: {
        number: 7,
        url: 'https://forge.example/fleet/pull/7',
        head: 'scaffolder/acme-prod/scaffold-infra/r1',
        base: 'main',
      },
    }),
    'merge request #7 (infra pass) merged as eeeeeeeeeeee, with changes pushed to it after the run',
  ],
  [
    'a merge request closed unmerged',
    event('MergeRequestClosed', {
      step: 'full-merge',
      pass: 'full',
      request: {
        number: 8,
        url: 'https://forge.example/fleet/pull/8',
        head: 'scaffolder/acme-prod/scaffold-full/r1',
        base: 'main',
      },
      reason: 'merge request #8 was closed without merging (https://forge.example/fleet/pull/8)',
    }),
    'merge request #8 (full pass) closed without merging: merge request #8 was closed without merging (https://forge.example/fleet/pull/8)',
  ],
];

/** Every .ts file under a folder of the repository, as paths from its root. */
function sources(folder: string): string[] {
  return readdirSync(join(root, folder)).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * What a run did, as scaffolderctl and the console say it: each sentence true to the event's data (a pass that found
 * its tree on the branch pushed nothing; a certificate given in the request means no controller was checked), from
 * one formatter both use, so the two renderings cannot drift apart.
 */
describe('the sentences of a run, in the terminal and in the console', () => {
  it.each(SAID)('%s', (_what, e, said) => {
    expect({ terminal: progressLine(e), console: eventSummary(e) }).toEqual({
      terminal: `10:00:41  ${e.type.padEnd(24)}${said}`,
      console: said,
    });
  });

  it('has a sentence for every event type of the catalogue, and for no other', () => {
    expect(Object.keys(EVENT_SENTENCES).sort()).toEqual([...EVENT_TYPES].sort());
    expect(new Set(SAID.map(([, e]) => e.type))).toEqual(new Set(EVENT_TYPES));
    // An event a newer service appends: the line names its type and says nothing of it.
    expect(eventSentence('SomethingNew', { step: 'x' })).toBe('');
    expect(eventSentence('toString', {})).toBe('');
  });

  it('comes from one source: the console is compiled from the same file scaffolderctl imports', () => {
    // The console's own build (src/console/ui/tsconfig.json) reads the shared file itself, not a copy of it.
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, 'src/console/ui/tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail(d.messageText) },
    )!;
    const program = ts.createProgram({ rootNames: config.fileNames, options: { ...config.options, noEmit: true } });
    const consoleFiles = program
      .getSourceFiles()
      .map((f) => relative(root, f.fileName))
      .filter((f) => !f.startsWith('node_modules'));
    expect(consoleFiles).toContain(SENTENCES);
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual(
      [],
    );
    // And neither scaffolderctl nor the console says what an event means in words of its own.
    const words = [
      'already on the branch',
      'objects sealed',
      're-driven by',
      'cancel requested by',
      'controller checked',
    ];
    const saying = [...sources('src/ctl'), ...sources('src/console'), ...sources('src/common')].filter(
      (file) => file !== SENTENCES && words.some((w) => readFileSync(join(root, file), 'utf8').includes(w)),
    );
    expect(saying).toEqual([]);
  });
});
