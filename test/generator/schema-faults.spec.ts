/**
 * Issue #26: every broken object kustomize accepts is refused before anything is written, with the
 * file, the object and the field, on each shipped reference and Flux's example layout, through the
 * command line (exit 1). The service's side is in test/service/schema-faults-e2e.spec.ts.
 */
import { spawn } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, readTree, tempDir } from '../support/files';
import { FAULTY_REFERENCES, faultRefusal, SCHEMA_FAULTS } from '../support/schema-faults';
import { CLI_REGISTRY_ENV } from '../support/generator-cli';

const BIN = join(__dirname, '../../bin/generate-gitops-env');
const CLUSTER = 'faulty';

function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({ ...CLI_REGISTRY_ENV, ...env }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('schema check through the command line: each broken object on each reference', () => {
  for (const ref of FAULTY_REFERENCES) {
    it(`${ref.name}: the unbroken reference passes; each fault exits 1 naming file, object and field, writing nothing`, async () => {
      const args = (repo: string) => [
        '--repo',
        repo,
        '--template',
        repo,
        '--reference-env',
        ref.referenceEnv,
        '--cluster-name',
        CLUSTER,
        '--domain',
        'acme.example.com',
        '--region',
        'eu-west-1',
        '--acme-email',
        'ops@acme.example.com',
        '--infra-only',
        '--json',
        ...(ref.args ?? []),
      ];
      const clean = ref.write();
      const ok = await runCli(args(clean));
      expect([ok.code, ok.stderr]).toEqual([0, '']);
      expect(JSON.parse(ok.stdout).schema_checked.objects).toBeGreaterThan(0);

      // Two at a time: each is a whole pass with its kustomize builds.
      const faults = [...SCHEMA_FAULTS];
      const outcomes: Array<{
        fault: string;
        code: number | null;
        stderr: string;
        expected: { code: number; message: RegExp };
        unchanged: boolean;
      }> = [];
      const worker = async () => {
        for (let fault = faults.shift(); fault; fault = faults.shift()) {
          const repo = ref.write();
          fault.plant(repo, ref);
          const before = readTree(repo);
          const r = await runCli(args(repo));
          outcomes.push({
            fault: fault.name,
            code: r.code,
            stderr: r.stderr,
            expected: faultRefusal(fault, ref, CLUSTER),
            unchanged: JSON.stringify(readTree(repo)) === JSON.stringify(before),
          });
        }
      };
      await Promise.all([worker(), worker()]);
      for (const o of outcomes) {
        expect({ fault: o.fault, code: o.code, unchanged: o.unchanged, stderr: o.stderr }).toEqual({
          fault: o.fault,
          code: o.expected.code,
          unchanged: true,
          stderr: expect.stringMatching(o.expected.message),
        });
      }
      expect(outcomes).toHaveLength(SCHEMA_FAULTS.length);
    }, 240_000);
  }
});

describe('validation without kubectl', () => {
  it('fails the pass (exit 1, nothing written) unless validation is turned off explicitly', async () => {
    // A PATH with git and nothing else: the machine's kubectl sits beside git in /usr/bin.
    const bin = tempDir('path-without-kubectl');
    symlinkSync('/usr/bin/git', join(bin, 'git'));
    const repo = tempDir('no-kubectl-repo');
    const args = [
      '--source-url',
      'https://git.example.org/acme/fleet.git',
      '--repo',
      repo,
      '--cluster-name',
      'nokube',
      '--domain',
      'nokube.example.com',
      '--region',
      'eu-west-1',
      '--acme-email',
      'ops@example.com',
      '--infra-only',
    ];
    const refused = await runCli(args, { PATH: bin });
    expect([refused.code, refused.stderr]).toEqual([
      1,
      'generate-gitops-env: kubectl not found: the tree cannot be validated (install kubectl, or turn validation off explicitly with --no-validate)\n',
    ]);
    expect(readTree(repo)).toEqual({});
    const unvalidated = await runCli([...args, '--no-validate'], { PATH: bin });
    expect([unvalidated.code, unvalidated.stdout]).toEqual([0, expect.stringContaining('validated: no')]);
  });
});
