import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { PINNED_KUBECTL, PINNED_KUBECTL_INSTALL } from '#libs/generator/kubectl-version';
import { makeRsaCert } from '../support/certs';
import { allFiles, childEnv, readTree, tempDir, yamlObjects } from '../support/files';
import { CORP_PLANTED, writeCorpReference } from '../support/reference-repos';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';
import { CLI_REGISTRY_ENV } from '../support/generator-cli';

const BIN = join(__dirname, '../../bin/generate-gitops-env');

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: childEnv({ ...CLI_REGISTRY_ENV, ...env }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('generate-gitops-env command line', () => {
  // Each run writes into a folder without an origin remote: Flux's URL is given (the origin tests below do without).
  const SOURCE_URL = ['--source-url', 'https://git.example.org/acme/fleet.git'];
  const common = [
    ...SOURCE_URL,
    '--cluster-name',
    'cli-test',
    '--domain',
    'cli.example.com',
    '--region',
    'eu-west-2',
    '--acme-email',
    'ops@cli.example.com',
  ];

  it('prints help and its version', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--infra-only');
    expect(run(['--version']).stdout).toMatch(/^generate-gitops-env \d+\.\d+\.\d+\n$/);
  });

  it('helps a newcomer: a mistyped option gets a suggestion, missing flags and a missing pass get the usage', () => {
    const typo = run(['--infra-onyl']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^generate-gitops-env: unknown option --infra-onyl; did you mean --infra-only\?\nUsage:\n {2}generate-gitops-env --repo DIR/,
    );
    const bare = run([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(
      /^generate-gitops-env: missing --repo, --cluster-name, --domain, --region, --acme-email; choose a pass: --infra-only \(the first pass: no secrets\) or --sealing-cert FILE \(the full pass\)\nUsage:/,
    );
    const noPass = run(['--repo', tempDir('cli-nopass'), ...common]);
    expect(noPass.stderr).toMatch(/choose a pass: --infra-only/);
    expect(noPass.stderr).toContain('(generate-gitops-env --help for every option)');
  });

  it('helps a newcomer with values: a missing value is named, every bad value is reported at once, -V points at --version', () => {
    const repo = tempDir('cli-values');
    const last = run(['--repo', repo, '--domain', 'a.example.com', '--cluster-name']);
    expect([last.code, last.stderr.split('\n')[0]]).toEqual([2, 'generate-gitops-env: --cluster-name needs a value']);
    const swallowed = run(['--repo', repo, '--cluster-name', '--domain', 'a.example.com']);
    expect(swallowed.stderr.split('\n')[0]).toBe(
      'generate-gitops-env: --cluster-name needs a value (the next word starts with "-")',
    );
    const bad = run([
      '--repo',
      repo,
      '--cluster-name',
      'Bad_Name',
      '--domain',
      'not a domain',
      '--region',
      'eu-west-2',
      '--acme-email',
      'nope',
      '--infra-only',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /^generate-gitops-env: --cluster-name must be a DNS-1123 label [^\n]*; --domain must be [^\n]*; --acme-email must be a plain e-mail address [^\n]*\n$/,
    );
    expect(bad.stderr).not.toContain('--region');
    expect(allFiles(repo)).toEqual([]);
    const short = run(['-V']);
    expect([short.code, short.stderr.split('\n')[0]]).toEqual([
      2,
      'generate-gitops-env: unknown option -V; did you mean --version?',
    ]);
    const completion = run(['completion', 'bash']);
    expect([completion.code, completion.stdout]).toEqual([
      0,
      expect.stringMatching(/^# bash completion for generate-gitops-env/),
    ]);
    expect(run(['completion', 'tcsh']).code).toBe(2);
  });

  it('names a missing template folder and lists the environments of a reference when the one asked for is not there', () => {
    const missing = run([
      '--repo',
      tempDir('cli-tmpl'),
      ...common,
      '--infra-only',
      '--template',
      '/nonexistent/templates/nope',
    ]);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      'generate-gitops-env: template folder /nonexistent/templates/nope does not exist\n',
    ]);
    const wrongEnv = run(['--repo', tempDir('cli-env'), ...common, '--infra-only', '--reference-env', 'staging']);
    expect(wrongEnv.code).toBe(2);
    expect(wrongEnv.stderr).toBe(
      `generate-gitops-env: reference environment "staging" does not exist in ${SHIPPED_TEMPLATE}; its environments: development\n`,
    );
  });

  it('says in the plain summary which shared folders it copied, counts in words that agree, and rewrites reference comments for the new cluster', () => {
    const repo = tempDir('cli-plain');
    const infra = run(['--repo', repo, ...common, '--infra-only']);
    expect(infra.code).toBe(0);
    const cert = makeRsaCert();
    writeFileSync(join(repo, '..', 'plain-cert.pem'), cert.certPem);
    const full = run(['--repo', repo, ...common, '--sealing-cert', join(repo, '..', 'plain-cert.pem')], {
      REGISTRY_SERVER: 'r.example.com',
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: 'PlainRegistryPw-1',
    });
    expect(full.code).toBe(0);
    expect(infra.stdout + full.stdout).toMatch(/shared folders copied into the repository \(they were missing\): base/);
    expect(infra.stdout + full.stdout).not.toMatch(/\b1 (keys|folders)\b/);
    const sync = execFileSync('cat', [join(repo, 'clusters/cli-test/flux-system/gotk-sync.yaml')], {
      encoding: 'utf8',
    });
    expect(sync).toMatch(/^# Flux sync objects for the cli-test cluster/);
    expect(
      sync
        .split('\n')
        .filter((l) => l.trimStart().startsWith('#'))
        .join('\n'),
    ).not.toMatch(/\bdevelopment\b/);
  });

  it('runs both passes on the shipped template with a JSON summary and never prints a credential', () => {
    const repo = tempDir('cli');
    const infra = run(['--repo', repo, ...common, '--infra-only', '--json']);
    expect(infra.stderr).toBe('');
    expect(infra.code).toBe(0);
    expect(JSON.parse(infra.stdout)).toMatchObject({
      pass: 'infra',
      gitops_path: 'clusters/cli-test',
      objects_sealed: [],
    });
    const cert = makeRsaCert();
    writeFileSync(join(repo, '..', 'cli-cert.pem'), cert.certPem);
    const registryPassword = 'CliRegistryPassword-9876543210';
    const full = run(['--repo', repo, ...common, '--sealing-cert', join(repo, '..', 'cli-cert.pem'), '--json'], {
      REGISTRY_SERVER: 'registry.cli.example.com',
      REGISTRY_USERNAME: 'cli-bot',
      REGISTRY_PASSWORD: registryPassword,
    });
    expect(full.code).toBe(0);
    const summary = JSON.parse(full.stdout);
    expect(summary.objects_sealed).toHaveLength(3);
    expect(summary.ingress_hosts.map((i: any) => i.to).flat()).toContain('api.cli.example.com');
    expect(summary.validated).toHaveLength(5);
    expect(full.stdout + full.stderr).not.toContain(registryPassword);
    expect(Object.values(readTree(repo)).join('\n')).not.toContain(registryPassword);
  });

  it('takes registry credentials from a docker config file and seals it as given', () => {
    const repo = tempDir('cli-auth');
    const dir = tempDir('cli-auth-files');
    const cert = makeRsaCert();
    writeFileSync(join(dir, 'cert.pem'), cert.certPem);
    const dockerConfig = JSON.stringify({
      auths: {
        'registry.cli.example.com': { auth: Buffer.from('file-user:FileRegistryPassword-123').toString('base64') },
      },
    });
    writeFileSync(join(dir, 'config.json'), dockerConfig);
    expect(run(['--repo', repo, ...common, '--infra-only']).code).toBe(0);
    const full = run([
      '--repo',
      repo,
      ...common,
      '--sealing-cert',
      join(dir, 'cert.pem'),
      '--registry-auth',
      join(dir, 'config.json'),
    ]);
    expect(full.code).toBe(0);
    const sealed = yamlObjects(join(repo, 'clusters/cli-test/apps/registry-credentials.yaml'))[0];
    expect(unsealManifest(cert.privateKeyPem, sealed)['.dockerconfigjson']).toBe(dockerConfig);
    writeFileSync(join(dir, 'bad.json'), '{"no": "auths"}');
    const bad = run([
      '--repo',
      repo,
      ...common,
      '--sealing-cert',
      join(dir, 'cert.pem'),
      '--registry-auth',
      join(dir, 'bad.json'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/has no "auths" object/);
  });

  it.each([
    [['--cluster-name', 'x'], /missing --repo, --domain/],
    [['--repo', '/nonexistent', ...common, '--infra-only'], /--repo \/nonexistent is not a folder/],
    [['--bogus'], /unknown option --bogus$/],
    [['--repo', '.', ...common, '--infra-only', '--domain', 'not a domain'], /--domain must be/],
    [['--repo', '.', ...common], /choose a pass: --infra-only/],
    [['--repo', '.', ...common, '--sealing-cert', '/nonexistent.pem'], /cannot be read/],
    [
      ['--repo', '.', ...common, '--infra-only', '--reference-env', 'nope'],
      /reference environment "nope" does not exist/,
    ],
  ])('exits 2 with one line for bad input (then the usage, for a wrong command line) %#', (args, message) => {
    const cwd = tempDir('cli-bad');
    const r = run(args.map((a) => (a === '.' ? cwd : a)));
    expect(r.code).toBe(2);
    const [first, ...rest] = r.stderr.trim().split('\n');
    expect(first).toMatch(message);
    expect(rest.length === 0 || rest[0] === 'Usage:').toBe(true);
    expect(allFiles(cwd)).toEqual([]);
  });

  it('runs both passes on the phased cluster-vars template with --var, and rejects a malformed --var', () => {
    const repo = tempDir('cli-vars');
    const phased = [
      '--repo',
      repo,
      ...common,
      '--template',
      join(__dirname, '../../templates/phased-platform'),
      '--reference-env',
      'dev',
    ];
    const vars = [
      '--var',
      'CLUSTER_ISSUER=letsencrypt-prod',
      '--var',
      'EXTERNAL_DNS_ROLE_ARN=arn:aws:iam::333333333333:role/dns',
    ];
    const infra = run([...phased, ...vars, '--infra-only', '--json']);
    expect(infra.stderr).toBe('');
    expect(JSON.parse(infra.stdout)).toMatchObject({
      environment_model: 'cluster-vars',
      cluster_vars: { CLUSTER_DOMAIN: 'cli.example.com', CLUSTER_ISSUER: 'letsencrypt-prod' },
    });
    const cert = makeRsaCert();
    writeFileSync(join(repo, '..', 'cli-vars-cert.pem'), cert.certPem);
    const full = run([...phased, ...vars, '--sealing-cert', join(repo, '..', 'cli-vars-cert.pem')], {
      REGISTRY_SERVER: 'registry.example.net',
      REGISTRY_USERNAME: 'cli-bot',
      REGISTRY_PASSWORD: 'CliVarsRegistryPassword-1234',
    });
    expect(full.code).toBe(0);
    expect(full.stdout).toContain('cluster-vars: CLUSTER_NAME=cli-test CLUSTER_DOMAIN=cli.example.com');
    expect(full.stdout).not.toContain('CliVarsRegistryPassword-1234');
    const vars2 = yamlObjects(join(repo, 'clusters/cli-test/cluster-vars.yaml'))[0].data;
    expect(vars2).toMatchObject({
      CLUSTER_REGION: 'eu-west-2',
      ACME_EMAIL: 'ops@cli.example.com',
      EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::333333333333:role/dns',
    });
    const bad = run([...phased, '--var', 'NO_EQUALS_SIGN', '--infra-only']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--var "NO_EQUALS_SIGN" must be KEY=VALUE/);
    const typo = run([...phased, '--var', 'CLUSTER_ISUER=letsencrypt-prod', '--infra-only']);
    expect([typo.code, typo.stderr]).toEqual([
      2,
      expect.stringMatching(/CLUSTER_ISUER.*; did you mean CLUSTER_ISSUER\?\n$/),
    ]);
  });

  it.each([
    ['overlay', []],
    [
      'cluster-vars',
      [
        '--template',
        join(__dirname, '../../templates/phased-platform'),
        '--reference-env',
        'dev',
        '--var',
        'EXTERNAL_DNS_ROLE_ARN=arn:aws:iam::555555555555:role/dns',
      ],
    ],
  ])(
    'writes SOPS-encrypted Secrets for an age recipient (%s reference) that open with the age command line',
    (_model, extra) => {
      const repo = tempDir('cli-sops');
      const age = ageIdentity();
      const args = ['--repo', repo, ...common, ...(extra as string[])];
      expect(run([...args, '--infra-only']).code).toBe(0);
      const full = run([...args, '--secrets-backend', 'sops', '--age-recipient', age.recipient, '--json'], {
        REGISTRY_SERVER: 'registry.example.net',
        REGISTRY_USERNAME: 'cli-bot',
        REGISTRY_PASSWORD: 'CliSopsRegistryPassword-5678',
      });
      expect(full.stderr).toBe('');
      const summary = JSON.parse(full.stdout);
      expect(summary.objects_sealed.map((o: any) => o.scope)).toEqual(['sops', 'sops', 'sops']);
      for (const sealed of summary.objects_sealed) {
        const { plain, macOk } = sopsOpen(yamlObjects(join(repo, sealed.file))[0], age.keyFile);
        expect(macOk).toBe(true);
        expect(Object.keys(plain.stringData).sort()).toEqual(sealed.keys);
      }
      expect(JSON.stringify(readTree(repo))).not.toContain('CliSopsRegistryPassword-5678');
    },
  );

  it('takes credentials only their issuer can create from a 0600 file, refuses to run without them, and never prints them', () => {
    const template = tempDir('cli-corp');
    writeCorpReference(template);
    const repo = tempDir('cli-corp-out');
    const cert = makeRsaCert();
    const certFile = join(tempDir('cli-corp-cert'), 'cert.pem');
    writeFileSync(certFile, cert.certPem);
    const corp = [
      '--repo',
      repo,
      '--template',
      template,
      '--reference-env',
      'staging',
      '--infra-layer',
      'core',
      '--cluster-name',
      't42',
      '--domain',
      't42.example.com',
    ];
    const args = [
      ...corp,
      ...SOURCE_URL,
      '--region',
      'eu-central-1',
      '--acme-email',
      'certs@t42.example.com',
      '--sealing-cert',
      certFile,
    ];
    const registry = {
      REGISTRY_SERVER: 'reg.t42.example.com',
      REGISTRY_USERNAME: 'bot',
      REGISTRY_PASSWORD: 'BotPassword-0123456789',
    };

    const missing = run(args, registry);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('state/mongo-root/api-token');
    expect(existsSync(join(repo, 'clusters/t42'))).toBe(false);

    const token = 'tok_issued_elsewhere_for_t42';
    const file = join(tempDir('cli-corp-creds'), 'credentials.yaml');
    writeFileSync(file, `state/mongo-root/api-token: ${token}\n`);
    chmodSync(file, 0o644);
    const open = run([...args, '--credentials', file], registry);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('readable or writable by group or others: chmod 600 it');

    chmodSync(file, 0o600);
    const ok = run([...args, '--credentials', file, '--json'], registry);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).not.toContain(token);
    const summary = JSON.parse(ok.stdout);
    expect(summary.credential_plan).toContainEqual({
      namespace: 'state',
      name: 'mongo-root',
      key: 'api-token',
      class: 'supplied',
      recognised_by: 'name',
    });
    expect(summary.credential_plan).toContainEqual({
      namespace: 'state',
      name: 'mongo-root',
      key: 'connection-string',
      class: 'derived',
      from: ['state/mongo-root'],
    });
    const mongo = yamlObjects(join(repo, 'clusters/t42/data/secrets.yaml')).find(
      (o) => o.metadata.name === 'mongo-root',
    );
    expect(unsealManifest(cert.privateKeyPem, mongo)['api-token']).toBe(token);
    const tree = Object.values(readTree(repo)).join('\n');
    expect(tree).not.toContain(token);
    for (const planted of Object.values(CORP_PLANTED)) expect(tree).not.toContain(planted);
  });

  it('--dry-run shows what the pass would change (sealed values masked) and the credential plan, and writes nothing', () => {
    const repo = tempDir('cli-dry');
    const cert = makeRsaCert();
    const certFile = join(tempDir('cli-dry-cert'), 'cert.pem');
    writeFileSync(certFile, cert.certPem);
    const dry = [
      ...SOURCE_URL,
      '--repo',
      repo,
      '--cluster-name',
      'dry',
      '--domain',
      'dry.example.com',
      '--region',
      'eu-west-2',
      '--acme-email',
      'ops@dry.example.com',
    ];
    const registry = {
      REGISTRY_SERVER: 'reg.dry.example.com',
      REGISTRY_USERNAME: 'bot',
      REGISTRY_PASSWORD: 'DryRegistryPassword-0123',
    };
    // The infra pass's dry run shows the full pass it rehearsed, after its own report; it writes nothing either.
    const empty = readTree(repo);
    const infraDry = run([...dry, '--infra-only', '--dry-run']);
    expect(infraDry.code).toBe(0);
    expect(infraDry.stdout).toContain(
      "the full pass that follows, rehearsed with a throwaway certificate until the cluster's own is fetched:\n",
    );
    expect(infraDry.stdout).toMatch(/^ {2}sealed data\/postgresql-credentials \(4 keys, strict\)$/m);
    expect(infraDry.stdout).not.toMatch(/Ag[A-Za-z0-9+/]{100}/);
    expect(readTree(repo)).toEqual(empty);
    expect(run([...dry, '--infra-only']).code).toBe(0);
    const before = readTree(repo);

    const shown = run([...dry, '--sealing-cert', certFile, '--dry-run'], registry);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    expect(readTree(repo)).toEqual(before);
    expect(shown.stdout).toMatch(/^dry run: \d+ files would change \(nothing was written\)/);
    // Nothing was written, so the summary says what would be, never "files written".
    expect(shown.stdout).toMatch(/^ {2}files that would be written: [1-9]\d*, removed: \d+$/m);
    expect(shown.stdout).not.toContain('files written');
    expect(shown.stdout).toContain('  added    clusters/dry/database/postgresql-credentials.yaml');
    expect(shown.stdout).toContain('+++ b/clusters/dry/database/postgresql-credentials.yaml');
    expect(shown.stdout).toContain('encryptedData: "<sealed: 4 keys>"');
    expect(shown.stdout).toContain(
      'credential data/postgresql-credentials/url: derived (from data/postgresql-credentials)',
    );
    expect(shown.stdout).not.toMatch(/Ag[A-Za-z0-9+/]{100}/); // no sealed payload
    expect(shown.stdout).not.toContain('DryRegistryPassword-0123');

    const json = JSON.parse(run([...dry, '--sealing-cert', certFile, '--dry-run', '--json'], registry).stdout);
    expect(json.changes.find((c: any) => c.path === 'clusters/dry/database/postgresql-credentials.yaml')).toMatchObject(
      { change: 'added' },
    );
    expect(json.summary.pass).toBe('full');
    expect(readTree(repo)).toEqual(before);

    // Bad input fails a dry run as it fails the real one.
    const noRegistry = { REGISTRY_SERVER: '', REGISTRY_USERNAME: '', REGISTRY_PASSWORD: '' };
    expect(run([...dry, '--sealing-cert', certFile, '--dry-run'], noRegistry).code).toBe(2);
  });

  it('warns once, naming the pinned version and its install command, when the first kubectl on PATH is another', () => {
    // An older kubectl first on PATH (a fresh shell on this machine finds v1.32): it answers its version and builds nothing.
    const older = tempDir('older-kubectl');
    writeFileSync(
      join(older, 'kubectl'),
      `#!/bin/sh\n[ "$1" = version ] && printf 'Client Version: v1.32.3\\nKustomize Version: v5.5.0\\n' && exit 0\nexit 1\n`,
    );
    chmodSync(join(older, 'kubectl'), 0o755);
    const repo = tempDir('older-kubectl-repo');
    const r = run(['--repo', repo, ...common, '--infra-only'], { PATH: `${older}:${process.env.PATH}` });
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toEqual([
      `generate-gitops-env: warning: the kubectl first on PATH is v1.32.3, not the pinned ${PINNED_KUBECTL} the tests and the service validate with (its kustomize may build trees differently); install the pinned one: ${PINNED_KUBECTL_INSTALL}`,
    ]);
    expect(PINNED_KUBECTL_INSTALL).toContain('bash scripts/install-kube-tools.sh');
    // The pinned one (first on PATH in the tests) says nothing; without validation kubectl is not asked.
    expect(run(['--repo', tempDir('pinned-kubectl-repo'), ...common, '--infra-only']).stderr).toBe('');
    expect(
      run(['--repo', tempDir('unvalidated-repo'), ...common, '--infra-only', '--no-validate'], {
        PATH: `${older}:${process.env.PATH}`,
      }).stderr,
    ).toBe('');
  });

  it('pins the same kubectl as the scripts that install it', () => {
    for (const script of ['scripts/ensure-services.sh', 'scripts/demo-tools.sh']) {
      const pinned = readFileSync(join(__dirname, '../..', script), 'utf8').match(/^KUBECTL_PINNED=(\S+)$/m)?.[1];
      expect({ script, pinned }).toEqual({ script, pinned: PINNED_KUBECTL });
    }
  });

  describe("the GitRepository URL from --repo's origin remote", () => {
    const args = (repo: string, extra: string[] = []) => [
      '--repo',
      repo,
      '--cluster-name',
      'src',
      '--domain',
      'src.example.com',
      '--region',
      'eu-west-2',
      '--acme-email',
      'ops@src.example.com',
      '--infra-only',
      ...extra,
    ];
    const gitRepositoryUrl = (repo: string) =>
      yamlObjects(join(repo, 'clusters/src/flux-system/gotk-sync.yaml')).find((o) => o.kind === 'GitRepository').spec
        .url;
    const withOrigin = (url?: string) => {
      const repo = tempDir('cli-origin');
      execFileSync('git', ['init', '-q', repo]);
      if (url) execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', url]);
      return repo;
    };

    it("points Flux at --repo's origin (scp-like made ssh://), refuses another repository without one, and --source-url wins", () => {
      const scp = withOrigin('git@github.com:acme/fleet.git');
      expect(run(args(scp)).code).toBe(0);
      expect(gitRepositoryUrl(scp)).toBe('ssh://git@github.com/acme/fleet.git');
      // Without an origin the new cluster would sync the reference's repository (ssh://git@git.example.net/platform/fleet.git).
      const none = withOrigin();
      const refused = run(args(none));
      expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('--repo has no origin remote')]);
      expect(readdirSync(none)).toEqual(['.git']);
      const given = withOrigin('git@github.com:acme/fleet.git');
      expect(run(args(given, ['--source-url', 'https://git.example.org/acme/fleet.git'])).code).toBe(0);
      expect(gitRepositoryUrl(given)).toBe('https://git.example.org/acme/fleet.git');
    });

    it("keeps the reference's URL when --repo is the reference's own repository", () => {
      const template = withOrigin('https://git.example.org/platform/fleet.git');
      cpSync(SHIPPED_TEMPLATE, template, { recursive: true });
      const repo = withOrigin('git@git.example.org:platform/fleet.git');
      expect(run([...args(repo), '--template', template]).code).toBe(0);
      expect(gitRepositoryUrl(repo)).toBe('ssh://git@git.example.net/platform/fleet.git');
    });

    it('refuses a URL with credentials (exit 2, nothing written, the token never printed)', () => {
      const repo = withOrigin('https://bot:OriginToken-1234@github.com/acme/fleet.git');
      const fromOrigin = run(args(repo));
      expect(fromOrigin.code).toBe(2);
      expect(fromOrigin.stderr).toContain("--repo's origin remote carries credentials");
      const given = run(args(withOrigin(), ['--source-url', 'https://bot:GivenToken-1234@github.com/acme/fleet.git']));
      expect(given.code).toBe(2);
      expect(given.stderr).toContain('--source-url must not carry credentials');
      expect(fromOrigin.stderr + fromOrigin.stdout + given.stderr + given.stdout).not.toMatch(/OriginToken|GivenToken/);
      expect(readTree(repo)).toEqual({});
    });
  });
  it('reads --reference-env ./kubernetes/main/ as kubernetes/main (the way people write a folder)', () => {
    const template = join(__dirname, '../fixtures/public/onedr0p-cluster-template');
    // The first pass writes cluster-secrets, whose webhook token GitHub signs with: supplied, never invented.
    const credentials = join(tempDir('cli-env-spelling-creds'), 'credentials.yaml');
    writeFileSync(
      credentials,
      [
        'flux-system/cluster-secrets/SECRET_WEBHOOK_TOKEN: AcmeGithubWebhookToken-9a9a',
        'cert-manager/cert-manager-secret/api-token: AcmeCloudflareToken-cert-manager-7e7e',
        'network/external-dns-secret/api-token: AcmeCloudflareToken-external-dns-8f8f',
        '',
      ].join('\n'),
    );
    chmodSync(credentials, 0o600);
    const written = (spelling: string) => {
      const repo = tempDir('cli-env-spelling');
      const r = run([
        '--repo',
        repo,
        '--template',
        template,
        '--reference-env',
        spelling,
        ...common,
        '--infra-only',
        '--secrets-backend',
        'sops',
        '--age-recipient',
        ageIdentity().recipient,
        '--credentials',
        credentials,
        '--json',
      ]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ reference_env: 'kubernetes/main' });
      return Object.keys(readTree(repo)).sort();
    };
    // The same files (their SOPS values are encrypted afresh each time, so the bytes differ).
    expect(written('./kubernetes/main/')).toEqual(written('kubernetes/main'));
  });
});
