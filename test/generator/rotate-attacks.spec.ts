/**
 * `generate-gitops-env rotate` attacked (an independent reviewer's tests): writes through links, writes outside the
 * environment's folders, a rotation that cannot finish, certificates no controller would accept, SealedSecrets the
 * render does not make.
 */
import { cpSync, existsSync, lstatSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { makeRsaCert } from '../support/certs';
import { allFiles, tempDir, writeTree } from '../support/files';
import { generatorCli } from '../support/generator-cli';
import { REGISTRY, referenceRepository, scaffoldWithCli } from '../support/lifecycle';

const snapshot = (root: string) => Object.fromEntries(allFiles(root).map((f) => [f, readFileSync(join(root, f))]));
const sealedFiles = (root: string) =>
  allFiles(root).filter(
    (f) =>
      /\.ya?ml$/.test(f) &&
      parseAllDocuments(readFileSync(join(root, f), 'utf8')).some((d) => d.toJS()?.kind === 'SealedSecret'),
  );

describe('generate-gitops-env rotate, attacked', () => {
  const reference = referenceRepository('rotate-atk-ref');
  const pristine = tempDir('rotate-atk-repo');
  const certFile = (pem: string, name: string) => {
    const file = join(tempDir('rotate-atk-cert'), `${name}.pem`);
    writeFileSync(file, pem);
    return file;
  };
  const fileA = certFile(makeRsaCert().certPem, 'a');
  const fileB = certFile(makeRsaCert().certPem, 'b');

  beforeAll(async () => {
    const s = await scaffoldWithCli(pristine, reference, 'acme-prod', fileA);
    expect([s.code, s.stderr]).toEqual([0, '']);
  }, 120_000);

  const copy = () => {
    const dir = tempDir('rotate-atk-copy');
    cpSync(pristine, dir, { recursive: true });
    return dir;
  };
  const rotate = (repo: string, cert: string, ...extra: string[]) =>
    generatorCli(
      [
        ...['rotate', '--repo', repo, '--template', reference, '--cluster-name', 'acme-prod'],
        ...['--sealing-cert', cert, '--new-values', ...extra],
      ],
      REGISTRY,
    );

  it("never writes through a link in the environment into another environment's file", async () => {
    const repo = copy();
    const [credential] = sealedFiles(repo).filter((f) => f.startsWith('clusters/acme-prod/'));
    expect(credential).toBeDefined();
    // Another tenant's file inside the repository; the link stays inside the working copy, so it is not refused.
    writeTree(repo, { 'clusters/acme-dev/secret.yaml': 'the other tenant\n' });
    rmSync(join(repo, credential));
    symlinkSync(
      relative(dirname(join(repo, credential)), join(repo, 'clusters/acme-dev/secret.yaml')),
      join(repo, credential),
    );
    const r = await rotate(repo, fileB);
    expect(readFileSync(join(repo, 'clusters/acme-dev/secret.yaml'), 'utf8')).toBe('the other tenant\n');
    // Either refused, or the link itself replaced by the new file.
    if (r.code === 0) expect(lstatSync(join(repo, credential)).isSymbolicLink()).toBe(false);
    else expect(r.code).toBe(2);
  });

  it("writes only inside the environment's folders (a moved cluster folder is refused, not recreated at clusters/<name>)", async () => {
    const repo = copy();
    renameSync(join(repo, 'clusters/acme-prod'), join(repo, 'clusters/prod-moved'));
    const r = await rotate(repo, fileB, '--json');
    if (r.code === 0) {
      const report = JSON.parse(r.stdout);
      for (const file of report.files_replaced)
        expect([file, report.folders.some((f: string) => file.startsWith(`${f}/`))]).toEqual([file, true]);
    } else expect(r.code).toBe(2);
    expect(existsSync(join(repo, 'clusters/acme-prod'))).toBe(false);
  });

  it('refuses a certificate that has expired, writing nothing', async () => {
    const repo = copy();
    const before = snapshot(repo);
    const expired = certFile(
      makeRsaCert({ notBefore: new Date(Date.now() - 2 * 86400_000), notAfter: new Date(Date.now() - 86400_000) })
        .certPem,
      'expired',
    );
    const r = await rotate(repo, expired);
    expect(r.code).toBe(2);
    expect(snapshot(repo)).toEqual(before);
  });

  it('refuses a file that is no certificate, writing nothing', async () => {
    const repo = copy();
    const before = snapshot(repo);
    const r = await rotate(
      repo,
      certFile('-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n', 'junk'),
    );
    expect(r.code).toBe(2);
    expect(snapshot(repo)).toEqual(before);
  });
  it('does not leave a SealedSecret of the environment sealed for the old certificate without saying so', async () => {
    const repo = copy();
    const [credential] = sealedFiles(repo).filter((f) => f.startsWith('clusters/acme-prod/'));
    // A SealedSecret the environment holds that this render does not make (added by hand, or by an older reference).
    const extra = join(dirname(credential), 'hand-sealed.yaml');
    cpSync(join(repo, credential), join(repo, extra));
    const r = await rotate(repo, fileB, '--json');
    if (r.code === 0) expect(r.stdout + r.stderr).toContain('hand-sealed.yaml');
    else expect(r.code).toBe(2);
  });
  it('writes no credential file when it cannot write every one (no half-rotated environment)', async () => {
    const repo = copy();
    const files = sealedFiles(repo)
      .filter((f) => f.startsWith('clusters/acme-prod/'))
      .sort();
    expect(files.length).toBeGreaterThan(1);
    const last = files[files.length - 1];
    // The last credential file cannot be replaced (a folder where the file goes).
    rmSync(join(repo, last));
    writeTree(repo, { [`${last}/keep`]: 'x\n' });
    const before = snapshot(repo);
    const r = await rotate(repo, fileB);
    expect(r.code).not.toBe(0);
    expect(snapshot(repo)).toEqual(before);
  });
});
