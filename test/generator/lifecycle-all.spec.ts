/**
 * `drift --all` and `upgrade --all` on a repository of three environments scaffolded from the shipped reference
 * (committed to a git repository of its own), after the reference bumped a chart: every environment is reported,
 * an environment a person edited where the reference did is a conflict left as it was while the others are
 * upgraded, and one that cannot be upgraded (its marker from before commits were recorded) is refused by name.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { generatorCli } from '../support/generator-cli';
import { git, referenceRepository, scaffoldWithCli } from '../support/lifecycle';

const CHART = 'clusters/development/infrastructure/ingress-nginx.yaml';
const chartOf = (repo: string, cluster: string) =>
  readFileSync(join(repo, `clusters/${cluster}/infrastructure/ingress-nginx.yaml`), 'utf8');
const markerOf = (repo: string, cluster: string) =>
  JSON.parse(readFileSync(join(repo, `clusters/${cluster}/.gitops-scaffolder.json`), 'utf8'));

describe('generate-gitops-env drift --all and upgrade --all', () => {
  const reference = referenceRepository('all-ref');
  const repo = tempDir('all-repo');
  const certFile = join(tempDir('all-cert'), 'cert.pem');
  writeFileSync(certFile, makeRsaCert().certPem);
  let commitB: string;

  beforeAll(async () => {
    for (const cluster of ['acme-dev', 'acme-prod', 'acme-old'])
      expect(await scaffoldWithCli(repo, reference, cluster, certFile)).toMatchObject({ code: 0 });
    // acme-old's marker as written before markers recorded the reference commit (version 1).
    const { cluster_name, domain, region, reference_env } = markerOf(repo, 'acme-old');
    writeFileSync(
      join(repo, 'clusters/acme-old/.gitops-scaffolder.json'),
      JSON.stringify({ cluster_name, domain, region, reference_env }, null, 2) + '\n',
    );
    // A person pinned acme-prod's chart where the reference is about to bump it.
    const prodChart = join(repo, 'clusters/acme-prod/infrastructure/ingress-nginx.yaml');
    writeFileSync(prodChart, readFileSync(prodChart, 'utf8').replace('version: "4.11.3"', 'version: "4.11.9"'));
    const text = readFileSync(join(reference, CHART), 'utf8');
    expect(text).toContain('version: "4.11.3"');
    writeFileSync(join(reference, CHART), text.replace('version: "4.11.3"', 'version: "4.12.0"'));
    git(reference, 'commit', '-q', '-am', 'reference B: the ingress chart bumped');
    commitB = git(reference, 'rev-parse', 'HEAD');
  }, 180_000);

  const run = (command: string, ...extra: string[]) =>
    generatorCli([command, '--repo', repo, '--template', reference, ...extra]);

  it('refuses --all beside --cluster-name, neither of them, and --all with a certificate', async () => {
    for (const args of [['--all', '--cluster-name', 'acme-dev'], [], ['--all', '--sealing-cert', certFile]]) {
      const r = await run(args.includes('--sealing-cert') ? 'upgrade' : 'drift', ...args);
      expect([args, r.code]).toEqual([args, 2]);
    }
  });

  it('drift --all reports every environment, the one it cannot render refused by name (exit 2)', async () => {
    const r = await run('drift', '--all', '--json');
    expect(r.code).toBe(2);
    const { environments } = JSON.parse(r.stdout);
    expect(environments.map((e: any) => [e.cluster_name, e.report?.commits_behind ?? e.refused])).toEqual([
      ['acme-dev', 1],
      ['acme-old', expect.stringContaining('scaffolded before markers recorded the reference commit')],
      ['acme-prod', 1],
    ]);
    expect(environments[2].report.changed).toEqual(['clusters/acme-prod/infrastructure/ingress-nginx.yaml']);
    const text = await run('drift', '--all');
    expect(text.stdout).toContain('cluster acme-old: refused: ');
    expect(text.stdout.match(/^cluster acme-(dev|prod) /gm)).toHaveLength(2);
  });

  it('upgrade --all upgrades the environments it can, leaving the conflicted and the refused ones as they were (exit 3)', async () => {
    const before = {
      prod: chartOf(repo, 'acme-prod'),
      old: chartOf(repo, 'acme-old'),
      prodMarker: markerOf(repo, 'acme-prod'),
    };
    const r = await run('upgrade', '--all', '--json');
    expect(r.code).toBe(3);
    const { environments } = JSON.parse(r.stdout);
    expect(environments.map((e: any) => [e.cluster_name, e.report?.outcome ?? 'refused'])).toEqual([
      ['acme-dev', 'upgraded'],
      ['acme-old', 'refused'],
      ['acme-prod', 'conflicted'],
    ]);
    expect(chartOf(repo, 'acme-dev')).toContain('version: "4.12.0"');
    expect(markerOf(repo, 'acme-dev').reference_commit).toBe(commitB);
    expect([chartOf(repo, 'acme-prod'), chartOf(repo, 'acme-old'), markerOf(repo, 'acme-prod')]).toEqual([
      before.prod,
      before.old,
      before.prodMarker,
    ]);
  });
});
