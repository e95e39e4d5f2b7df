/**
 * No byte of the reference's ciphertext reaches a new cluster, on onedr0p/home-ops as published in late 2024
 * (vendored, WTFPL): besides its SOPS-encrypted cluster-secrets (applied, regenerated) it keeps the cluster's
 * `sops-age` private key Secret, its Git deploy key and a Talos machine configuration, SOPS-encrypted under
 * kubernetes/main/bootstrap/, which no Flux Kustomization applies. Before: all three were copied byte for byte into
 * the new cluster's folder, with exit 0 and no word. The scan below is the test's own (not the generator's code).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions } from '#libs/generator';
import { describeSummary } from '#libs/generator/summary-text';
import { allFiles, readTree, tempDir, yamlObjects } from '../support/files';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { homeOpsOptions } from '../support/home-ops-options';

const FIXTURE = join(__dirname, '../fixtures/public/onedr0p-home-ops-sops');
const REFERENCE_RECIPIENT = 'age15uzrw396e67z9wdzsxzdk7ka0g2gr3l460e0slaea563zll3hdfqwqxdta';
const UNAPPLIED = [
  'kubernetes/main/bootstrap/flux/age-key.secret.sops.yaml',
  'kubernetes/main/bootstrap/flux/github-deploy-key.secret.sops.yaml',
  'kubernetes/main/bootstrap/talos/assets/k8s-0.secret.sops.yaml',
];

/** Every piece of ciphertext in a text: SOPS values, armored age/PGP blocks (whitespace dropped), SealedSecret values. */
function ciphertextIn(text: string): string[] {
  const sops = text.match(/ENC\[AES256_GCM,data:[^\]]*\]/g) ?? [];
  const armored = (text.match(/-----BEGIN [A-Z ]+-----[\s\S]*?-----END [A-Z ]+-----/g) ?? []).map((b) =>
    b.replace(/\s+/g, ''),
  );
  const sealed = text.includes('SealedSecret') ? (text.match(/[A-Za-z0-9+/=]{300,}/g) ?? []) : [];
  return [...sops, ...armored, ...sealed];
}

/** The reference's ciphertext found in `files` of `root` (other than the reference's own folder), by file. */
function referenceCiphertextIn(root: string, files: string[]): string[] {
  const reference = new Set(allFiles(FIXTURE).flatMap((f) => ciphertextIn(readFileSync(join(FIXTURE, f), 'utf8'))));
  expect(reference.size).toBeGreaterThan(20);
  return files.filter((f) => {
    const text = readFileSync(join(root, f), 'utf8');
    const metadataForReference = f !== '.sops.yaml' && text.includes(REFERENCE_RECIPIENT);
    return metadataForReference || ciphertextIn(text).some((c) => reference.has(c));
  });
}

const ACCOUNT_ID_KEY = 'flux-system/cluster-secrets/CLUSTER_SECRET_CLOUDFLARE_ACCOUNT_ID';
const ACCOUNT_ID = 'acme-cloudflare-account-0d0d';

describe("the reference's ciphertext (onedr0p/home-ops with SOPS, as published)", () => {
  const age = ageIdentity();
  // cluster-secrets holds the reference's Cloudflare account id: the new cluster's is given, never invented.
  const options = (repoDir: string, templateDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions =>
    homeOpsOptions(age.recipient, repoDir, templateDir, {
      suppliedCredentials: { [ACCOUNT_ID_KEY]: ACCOUNT_ID },
      ...extra,
    });
  const copyOf = () => {
    const dir = tempDir('home-ops-sops');
    cpSync(FIXTURE, dir, { recursive: true });
    return dir;
  };
  const bothPasses = async (repo: string, reference: string) => {
    const infra = await generate(options(repo, reference));
    const full = await generate(options(repo, reference, { pass: 'full' }));
    return { infra: infra.summary, full: full.summary };
  };
  const omittedPaths = UNAPPLIED.map((path) => ({
    path,
    reason: expect.stringMatching(new RegExp(`^SOPS-encrypted for ${REFERENCE_RECIPIENT};`)),
  }));

  it('beside the reference: the unapplied encrypted files are left out and listed, cluster-secrets regenerated', async () => {
    const repo = copyOf();
    const { infra, full } = await bothPasses(repo, repo);
    expect(infra.gitops_path).toBe('kubernetes/acme');
    for (const summary of [infra, full]) expect(summary.omitted_encrypted).toEqual(omittedPaths);
    const written = allFiles(repo).filter((f) => !f.startsWith('kubernetes/main/'));
    expect(written).not.toContain('kubernetes/acme/bootstrap/flux/age-key.secret.sops.yaml');
    expect(referenceCiphertextIn(repo, written)).toEqual([]);
    // The applied one is the new cluster's: it opens with the test's key.
    const secrets = yamlObjects(join(repo, 'kubernetes/acme/flux/vars/cluster-secrets.secret.sops.yaml'))[0];
    const opened = sopsOpen(secrets, age.keyFile);
    expect(opened.macOk).toBe(true);
    expect(opened.plain.stringData.CLUSTER_SECRET_CLOUDFLARE_ACCOUNT_ID).toBe(ACCOUNT_ID);
    // The CLI's summary names each file left out.
    const text = describeSummary(full);
    for (const path of UNAPPLIED)
      expect(text).toContain(`  left out ${path}: SOPS-encrypted for ${REFERENCE_RECIPIENT}`);
  });

  it("into another repository: nothing encrypted for the reference's keys, .sourceignore and .sops.yaml carried", async () => {
    const reference = copyOf();
    writeFileSync(join(reference, '.sourceignore'), '# Flux ignore\ndocs/\n*.md\ntalos/\n');
    const repo = tempDir('customer');
    const { infra, full } = await bothPasses(repo, reference);
    expect(infra.repo_files).toEqual(['.sourceignore']);
    expect(full.gitops_path).toBe('kubernetes/main');
    expect(full.omitted_encrypted).toEqual(omittedPaths);
    const written = allFiles(repo);
    for (const path of UNAPPLIED) expect(written).not.toContain(path);
    expect(referenceCiphertextIn(repo, written)).toEqual([]);
    expect(readTree(repo)['.sourceignore']).toBe('# Flux ignore\ndocs/\n*.md\ntalos/\n');
    expect(full.repo_files.sort()).toEqual(['.sops.yaml', '.sourceignore']);
    // The new repository's rules are for the new cluster's key only, never the reference's.
    const rules = readTree(repo)['.sops.yaml'];
    expect(rules).toContain(age.recipient);
    expect(rules).not.toContain(REFERENCE_RECIPIENT);
  });

  it('a kustomization listing an encrypted file that is not a Secret is refused, naming both', async () => {
    const repo = copyOf();
    // A SOPS-encrypted ConfigMap (cluster-secrets' ciphertext under another kind): nothing can regenerate it.
    const secrets = readFileSync(join(repo, 'kubernetes/main/flux/vars/cluster-secrets.secret.sops.yaml'), 'utf8');
    const appDir = join(repo, 'kubernetes/main/apps/kube-system/metrics-server/app');
    writeFileSync(
      join(appDir, 'settings.sops.yaml'),
      secrets.replace('kind: Secret', 'kind: ConfigMap').replace('stringData:', 'data:'),
    );
    writeFileSync(
      join(appDir, 'kustomization.yaml'),
      readFileSync(join(appDir, 'kustomization.yaml'), 'utf8') + '  - ./settings.sops.yaml\n',
    );
    await expect(generate(options(repo, repo))).rejects.toThrow(
      /^kubernetes\/main\/apps\/kube-system\/metrics-server\/app\/settings\.sops\.yaml is SOPS-encrypted for age15uzrw.*kubernetes\/main\/apps\/kube-system\/metrics-server\/app\/kustomization\.yaml lists it/,
    );
  });
});
