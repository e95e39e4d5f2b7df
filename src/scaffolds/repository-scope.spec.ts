import fc from 'fast-check';
import { ApiError } from '../common/api-error';
import { repositoryPrefixProblem, withinPrefix } from '#libs/git';
import { checkRepositoryScope, checkSecretScope } from './repository-scope';

const segment = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,11}$/);
const path = fc.array(segment, { minLength: 1, maxLength: 4 });
const base = fc.constantFrom(
  'https://git.example.com',
  'ssh://git@git.example.com',
  'https://git.example.com:8443',
  'file://',
);

describe('repository prefixes of a key scope', () => {
  it.each([
    ['https://git.example.com/team-a/x.git', 'https://git.example.com/team-a', true],
    ['https://git.example.com/team-a', 'https://git.example.com/team-a/', true],
    ['https://Git.Example.COM:443/team-a/x', 'https://git.example.com/team-a', true],
    ['git@git.example.com:team-a/x.git', 'ssh://git@git.example.com/team-a', true],
    ['https://git.example.com/team-a/x.git', 'https://git.example.com/team-a/x.git', true],
    ['https://git.example.com/team-a-evil/x', 'https://git.example.com/team-a', false],
    ['https://git.example.com/team-a.git/x', 'https://git.example.com/team-a', false],
    ['https://git.example.com/team-a/../team-b/x', 'https://git.example.com/team-a', false],
    ['https://git.example.com/team-a/%2e%2e/team-b/x', 'https://git.example.com/team-a', false],
    ['https://git.example.com/team-a/x%2F..%2F..%2Fteam-b', 'https://git.example.com/team-a', false],
    ['https://git.example.com/team-a/x?y=1', 'https://git.example.com/team-a', false],
    ['git@git.example.com:team-a/../team-b/x', 'ssh://git@git.example.com/team-a', false],
    // URL parsing reads tenant-a//.. as tenant-a; an ssh server's file system as the folder above it.
    ['root@git.example.com:/srv/git/tenant-a//../tenant-b/x.git', 'ssh://root@git.example.com/srv/git/tenant-a', false],
    [
      'ssh://root@git.example.com/srv/git/tenant-a//../tenant-b/x',
      'ssh://root@git.example.com/srv/git/tenant-a',
      false,
    ],
    ['https://git.example.com/team-a;/../team-b/x', 'https://git.example.com/team-a', false],
    ['https://git.example.com/team-a/%252e%252e/team-b/x', 'https://git.example.com/team-a', false],
    ['https://git.example.com.evil.test/team-a/x', 'https://git.example.com', false],
    ['https://git.example.com:8443/team-a/x', 'https://git.example.com/team-a', false],
    ['ssh://git@git.example.com/team-a/x', 'https://git.example.com/team-a', false],
    ['not a url', 'https://git.example.com', false],
  ])('%s within %s: %s', (url, prefix, expected) => {
    expect(withinPrefix(url, prefix)).toBe(expected);
  });

  it('admits every repository below a prefix, whatever the segments', () => {
    fc.assert(
      fc.property(base, path, path, (b, prefix, rest) =>
        withinPrefix(`${b}/${[...prefix, ...rest].join('/')}.git`, `${b}/${prefix.join('/')}`),
      ),
    );
  });

  it('never admits a sibling whose name merely starts like the prefix', () => {
    fc.assert(
      fc.property(base, path, fc.stringMatching(/^[a-z0-9._-]{1,8}$/), path, (b, prefix, extra, rest) => {
        const sibling = [...prefix.slice(0, -1), prefix[prefix.length - 1] + extra, ...rest].join('/');
        fc.pre(extra !== '.git');
        return !withinPrefix(`${b}/${sibling}`, `${b}/${prefix.join('/')}`);
      }),
    );
  });

  it('never admits a path that climbs out with ".." (plain or encoded) to another folder', () => {
    fc.assert(
      fc.property(
        base,
        path,
        segment,
        path,
        fc.constantFrom('..', '%2e%2e', '%2E.', '.%2e'),
        (b, prefix, other, rest, up) => {
          fc.pre(other !== prefix[prefix.length - 1]);
          const climbed = [...prefix, up, other, ...rest].join('/');
          return !withinPrefix(`${b}/${climbed}`, `${b}/${prefix.join('/')}`);
        },
      ),
    );
  });

  it('never throws, whatever the strings', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 200 }),
        (a, b) => typeof withinPrefix(a, b) === 'boolean',
      ),
    );
  });

  it('names prefixes that cannot be compared', () => {
    expect(repositoryPrefixProblem('https://git.example.com/team-a')).toBeNull();
    expect(repositoryPrefixProblem('git.example.com/team-a')).toMatch(/is not a URL/);
    expect(repositoryPrefixProblem('https://git.example.com/a%2Fb')).toMatch(/is not a URL/);
  });
});

describe('request scope checks', () => {
  const scoped = {
    name: 'team-a',
    role: 'operator' as const,
    repositories: ['https://git.example.com/team-a'],
    secretNamespaces: ['team-a'],
  };
  const refusal = (f: () => void) => {
    try {
      f();
      return null;
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      return [(e as ApiError).status, (e as ApiError).code];
    }
  };

  it('checks repo.url and repo.flux_url against the prefixes; a key without prefixes may use any', () => {
    expect(
      refusal(() => checkRepositoryScope(scoped, { repo_url: 'https://git.example.com/team-a/x.git' })),
    ).toBeNull();
    expect(refusal(() => checkRepositoryScope(scoped, { repo_url: 'https://git.example.com/team-b/x.git' }))).toEqual([
      403,
      'repository_not_allowed',
    ]);
    expect(
      refusal(() =>
        checkRepositoryScope(scoped, {
          repo_url: 'https://git.example.com/team-a/x.git',
          flux_url: 'https://git.example.com/team-b/x.git',
        }),
      ),
    ).toEqual([403, 'repository_not_allowed']);
    expect(
      refusal(() =>
        checkRepositoryScope({ name: 'any', role: 'operator' }, { repo_url: 'https://elsewhere.test/x.git' }),
      ),
    ).toBeNull();
  });

  it("checks Secret namespaces against the key's, else the defaults (admins too)", () => {
    const target = { kind: 'kubeconfig_secret' as const, ref: { namespace: 'kube-system', name: 'k', key: 'value' } };
    const sealing = { kind: 'age_recipients' as const, recipients: ['age1x'] };
    expect(
      refusal(() =>
        checkSecretScope(scoped, { credentials_secret: { namespace: 'team-a', name: 'c' }, target: sealing }, []),
      ),
    ).toBeNull();
    expect(refusal(() => checkSecretScope(scoped, { target }, ['kube-system']))).toEqual([
      403,
      'secret_namespace_not_allowed',
    ]);
    expect(
      refusal(() =>
        checkSecretScope(
          { name: 'ops', role: 'admin' },
          { credentials_secret: { namespace: 'kube-system', name: 'c' }, target: sealing },
          [],
        ),
      ),
    ).toEqual([403, 'secret_namespace_not_allowed']);
    expect(refusal(() => checkSecretScope({ name: 'ops', role: 'admin' }, { target }, ['kube-system']))).toBeNull();
  });
});
