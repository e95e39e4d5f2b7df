import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generate, GenerateOptions } from '#libs/generator';
import { guardReferenceSecrets } from '#libs/generator/protect';
import type { ReferenceObject } from '#libs/generator/reference';
import { tempDir } from '../support/files';
import { ageIdentity } from '../support/sops-open';
import { homeOpsOptions } from '../support/home-ops-options';

/**
 * A service-account token Secret as Kubernetes' documentation writes it (kubernetes/website,
 * content/en/docs/tasks/configure-pod-container/configure-service-account.md, "Manually create a
 * service account API token"; CC BY 4.0): no values, the API server's token controller fills them.
 */
const TOKEN_REQUEST = `apiVersion: v1
kind: Secret
metadata:
  name: build-robot-secret
  annotations:
    kubernetes.io/service-account.name: build-robot
type: kubernetes.io/service-account-token
`;

const FIXTURE = join(__dirname, '../fixtures/public/onedr0p-cluster-template');
const APP = 'apps/network/echo-server/app';

describe('service-account token Secrets the API server fills', () => {
  const age = ageIdentity();
  const options = (repo: string, extra: Partial<GenerateOptions>): GenerateOptions =>
    homeOpsOptions(age.recipient, repo, repo, {
      suppliedCredentials: {
        'cert-manager/cert-manager-secret/api-token': 'AcmeCloudflareToken-cert-manager-7e7e',
        'network/external-dns-secret/api-token': 'AcmeCloudflareToken-external-dns-8f8f',
        // The token GitHub signs its webhook calls with: given to GitHub, so supplied, never invented.
        'flux-system/cluster-secrets/SECRET_WEBHOOK_TOKEN': 'AcmeGithubWebhookToken-9a9a',
      },
      ...extra,
    });

  it('are carried as they are, in the pass of their folder', async () => {
    const repo = tempDir('sa-token');
    cpSync(FIXTURE, repo, { recursive: true });
    writeFileSync(join(repo, 'kubernetes/main', APP, 'token.yaml'), TOKEN_REQUEST);
    const infra = await generate(options(repo, {}));
    // echo-server holds no credential: it stays in the first pass, token request and all.
    expect(infra.summary.kustomizations.map((k) => k.name)).toContain('echo-server');
    const written = join(repo, 'kubernetes/acme', APP, 'token.yaml');
    expect(readFileSync(written, 'utf8')).toBe(TOKEN_REQUEST);
    const full = await generate(options(repo, { pass: 'full' }));
    expect(readFileSync(written, 'utf8')).toBe(TOKEN_REQUEST);
    expect(full.summary.objects_sealed.map((s) => s.name)).not.toContain('build-robot-secret');
    expect(full.summary.credential_plan.map((e) => e.name)).not.toContain('build-robot-secret');
  });

  const object = (body: any, shared = false): ReferenceObject => ({
    file: 'clusters/ref/token.yaml',
    index: 0,
    apiVersion: body.apiVersion,
    kind: body.kind,
    name: body.metadata.name,
    namespace: 'default',
    targetNamespace: undefined,
    body,
    shared,
  });
  const where = { moveTo: 'a later Kustomization', keepIn: "the environment's folder" };
  const request = parse(TOKEN_REQUEST);

  it('are no secret for the placement rules: in the first pass or a shared folder', () => {
    expect(() => guardReferenceSecrets([object(request)], [], where)).not.toThrow();
    expect(() => guardReferenceSecrets([], [{ objects: [object(request, true)] }], where)).not.toThrow();
  });

  it('with values of their own are still secrets (the reference cluster issued them)', () => {
    const issued = { ...request, data: { token: Buffer.from('eyJ.reference.token').toString('base64') } };
    expect(() => guardReferenceSecrets([object(issued)], [], where)).toThrow(/first pass/);
  });
});
