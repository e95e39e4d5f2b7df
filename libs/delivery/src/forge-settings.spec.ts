import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForgeError } from './forge-port';
import { createForgeResolver } from './forge-resolver';
import { forgeSettingsFromEnv, ForgeSettingsError, repositoryPathOf } from './forge-settings';
import { GitHubStandIn, startGitHubStandIn, standInTls } from '../../../test/support/forges';
import { tempDir } from '../../../test/support/files';

/** A token file readable by its owner only. */
function tokenFile(dir: string, name: string, token: string, mode = 0o600): string {
  const file = join(dir, name);
  writeFileSync(file, `${token}\n`);
  chmodSync(file, mode);
  return file;
}

describe('the forge settings', () => {
  const dir = tempDir('forge-settings');
  const github = tokenFile(dir, 'github-token', 'ghp_settingstoken0001');
  const gitlab = tokenFile(dir, 'gitlab-token', 'glpat-settingstoken0002');
  const env = (defaults: unknown[], extra: Record<string, string> = {}) => ({
    FORGE_DEFAULTS: JSON.stringify(defaults),
    ...extra,
  });

  it('reads FORGE_DEFAULTS, deriving the API URL of each forge from the prefix when not given', () => {
    const settings = forgeSettingsFromEnv(
      env([
        { prefix: 'https://github.com/acme', forge: 'github', token_file: github },
        { prefix: 'git@gitlab.example:platform', forge: 'gitlab', token_file: gitlab, auto_merge: true },
        { prefix: 'https://gitea.example/ops', forge: 'gitea', token_file: github },
      ]),
    );
    expect(settings.defaults.map((d) => [d.forge, d.apiUrl, d.autoMerge])).toEqual([
      ['github', 'https://api.github.com', false],
      ['gitlab', 'https://gitlab.example/api/v4', true],
      ['gitea', 'https://gitea.example/api/v1', false],
    ]);
    expect(settings.timeoutMs).toBe(30_000);
    expect(forgeSettingsFromEnv({}).defaults).toEqual([]);
  });

  it('takes a token from FORGE_CREDENTIALS_DIR, a mounted Secret with one key per API host', () => {
    const secret = join(dir, 'secret');
    mkdirSync(secret);
    // A Secret's files are often group-readable (fsGroup): the folder is the Secret, as GIT_CREDENTIALS_DIR.
    tokenFile(secret, 'gitea.example_3000', 'gitea-token-0003', 0o644);
    const settings = forgeSettingsFromEnv(
      env([{ prefix: 'https://gitea.example:3000/ops', forge: 'gitea' }], { FORGE_CREDENTIALS_DIR: secret }),
    );
    expect(settings.defaults[0]).toMatchObject({
      apiUrl: 'https://gitea.example:3000/api/v1',
      tokenFile: join(secret, 'gitea.example_3000'),
    });
    expect(() =>
      forgeSettingsFromEnv(
        env([{ prefix: 'https://gitea.other/ops', forge: 'gitea' }], { FORGE_CREDENTIALS_DIR: secret }),
      ),
    ).toThrow('FORGE_DEFAULTS[0]: FORGE_CREDENTIALS_DIR ' + secret + ' has no key gitea.other');
  });

  it.each([
    ['not JSON', { FORGE_DEFAULTS: '{' }, 'FORGE_DEFAULTS: not JSON'],
    ['not a list', { FORGE_DEFAULTS: '{}' }, 'FORGE_DEFAULTS: must be a JSON list'],
    [
      'an unknown forge',
      env([{ prefix: 'https://h/a', forge: 'bitbucket', token_file: github }]),
      'FORGE_DEFAULTS[0].forge',
    ],
    ['an unknown field', env([{ prefix: 'https://h/a', forge: 'gitea', token: 'x' }]), 'unknown field "token"'],
    [
      'a prefix git could read otherwise',
      env([{ prefix: 'https://h/a/../b', forge: 'gitea', token_file: github }]),
      '".." path segments',
    ],
    [
      'plain http to a forge',
      env([{ prefix: 'https://h/a', forge: 'gitea', api_url: 'http://h/api/v1', token_file: github }]),
      'must be https://',
    ],
    [
      'GitHub Enterprise without its API',
      env([{ prefix: 'https://ghe.example/a', forge: 'github', token_file: github }]),
      'https://ghe.example/api/v3',
    ],
    [
      'a prefix twice',
      env([1, 2].map(() => ({ prefix: 'https://h/a', forge: 'gitea', token_file: github }))),
      'given twice',
    ],
    [
      'no token',
      env([{ prefix: 'https://h/a', forge: 'gitea' }]),
      'give token_file, or FORGE_CREDENTIALS_DIR with a key h',
    ],
    [
      'a token file others can read',
      env([{ prefix: 'https://h/a', forge: 'gitea', token_file: tokenFile(dir, 'open', 't0k3n', 0o644) }]),
      'chmod 600',
    ],
    [
      'a missing token file',
      env([{ prefix: 'https://h/a', forge: 'gitea', token_file: join(dir, 'none') }]),
      'cannot be read (ENOENT)',
    ],
    [
      'a CA file without a certificate',
      { FORGE_CA_FILE: github },
      'FORGE_CA_FILE: ' + github + ' holds no PEM certificate',
    ],
    ['a timeout out of range', { FORGE_TIMEOUT_SECONDS: '0' }, 'FORGE_TIMEOUT_SECONDS'],
  ])('refuses %s, naming the setting and never the token', (_, given, message) => {
    let error: unknown;
    try {
      forgeSettingsFromEnv(given);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ForgeSettingsError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toMatch(/settingstoken|t0k3n/);
  });

  it('names the repository as each API does, from https, ssh and scp-like URLs', () => {
    expect(repositoryPathOf('github', 'https://github.com/acme/envs.git')).toBe('acme/envs');
    expect(repositoryPathOf('gitea', 'git@gitea.example:ops/envs.git')).toBe('ops/envs');
    expect(repositoryPathOf('gitlab', 'ssh://git@gitlab.example/platform/team-a/envs.git')).toBe(
      'platform/team-a/envs',
    );
    expect(() => repositoryPathOf('github', 'https://github.com/acme/group/envs')).toThrow(
      'not a github repository (owner/name)',
    );
    expect(() => repositoryPathOf('gitlab', 'https://gitlab.example/a/../b')).toThrow(ForgeError);
  });
});

describe('the forge resolver', () => {
  const dir = tempDir('forge-resolver');
  let server: GitHubStandIn;
  let tokenPath: string;
  const logged: string[] = [];

  beforeAll(async () => {
    server = (await startGitHubStandIn()).repository('acme/envs');
    server.setHead('acme/envs', 'scaffolder/acme/create/1');
    tokenPath = tokenFile(dir, 'token', server.token);
  });
  afterAll(() => server.stop());

  const resolver = () =>
    createForgeResolver(
      forgeSettingsFromEnv({
        FORGE_DEFAULTS: JSON.stringify([
          {
            prefix: 'https://git.example/acme',
            forge: 'github',
            api_url: server.apiUrl,
            token_file: tokenPath,
            auto_merge: true,
          },
          {
            prefix: 'https://git.example',
            forge: 'gitea',
            api_url: 'https://git.example/api/v1',
            token_file: tokenPath,
          },
        ]),
        FORGE_CA_FILE: standInTls().caFile,
      }),
      { log: (line) => logged.push(line) },
    );

  it('answers with the longest matching prefix, and null where no prefix matches', () => {
    const forges = resolver();
    const acme = forges.forgeFor('https://git.example/acme/envs.git');
    expect(acme).toMatchObject({ repository: { apiUrl: server.apiUrl, path: 'acme/envs' }, autoMerge: true });
    expect(acme!.port.kind).toBe('github');
    expect(forges.forgeFor('https://git.example/ops/envs')).toMatchObject({
      port: { kind: 'gitea' },
      autoMerge: false,
    });
    // On a path-segment boundary: acme-evil is not under acme.
    expect(forges.forgeFor('https://git.example/acme-evil/envs')!.port.kind).toBe('gitea');
    expect(forges.forgeFor('https://other.example/acme/envs')).toBeNull();
    // Whatever the scheme, user and port: the same repository over ssh is on the same forge.
    expect(forges.forgeFor('git@git.example:acme/envs.git')).toMatchObject({
      repository: { path: 'acme/envs' },
      autoMerge: true,
    });
    expect(forges.forgeFor('ssh://git@git.example:2222/acme/envs')!.port.kind).toBe('github');
    expect(forges.forgeFor('https://git.example/acme/../ops/envs')).toBeNull();
  });

  it('refuses a request naming another forge or API than the settings (the token goes to no other host)', () => {
    const forges = resolver();
    expect(() => forges.forgeFor('https://git.example/acme/envs', { forge: 'gitlab' })).toThrow(
      'delivery.forge gitlab: the settings name github for https://git.example/acme',
    );
    expect(() => forges.forgeFor('https://git.example/acme/envs', { apiUrl: 'https://evil.example' })).toThrow(
      'its token is sent to no other API',
    );
    expect(
      forges.forgeFor('https://git.example/acme/envs', { forge: 'github', apiUrl: `${server.apiUrl}/` }),
    ).not.toBeNull();
  });

  it("reaches the forge with the file's token, trusting FORGE_CA_FILE, and reads the file at each call", async () => {
    const { port, repository } = resolver().forgeFor('https://git.example/acme/envs')!;
    const opened = await port.openMergeRequest({
      repository,
      head: 'scaffolder/acme/create/1',
      base: 'main',
      title: 't',
      body: 'b',
      labels: [],
      autoMerge: false,
    });
    expect(opened.state).toBe('open');
    // A rotated Secret: the next call sends what the file holds now (a token the forge refuses).
    writeFileSync(tokenPath, 'rotated-but-wrong-token\n');
    const error = await port.readMergeRequest(repository, opened.number).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401 });
    expect(server.received.at(-1)!.headers.authorization).toBe('Bearer rotated-but-wrong-token');
    expect(`${(error as Error).message}\n${logged.join('\n')}`).not.toMatch(
      new RegExp(`${server.token}|rotated-but-wrong`),
    );
  });
});
