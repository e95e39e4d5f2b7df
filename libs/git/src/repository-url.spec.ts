import {
  fluxUrlOf,
  hasCredentials,
  normaliseRepoUrl,
  repoUrlProblem,
  sameRepository,
  withoutCredentials,
} from './repository-url';

describe('repository URLs', () => {
  it.each([
    ['https://github.com/acme/fleet.git', 'git@github.com:acme/fleet.git'],
    ['https://GitHub.com/acme/fleet', 'ssh://git@github.com:22/acme/fleet.git'],
    ['https://git.example.org/acme/fleet.git/', 'https://git.example.org:443/acme/fleet'],
    ['/srv/git/fleet.git', 'file:///srv/git/fleet.git'],
    // One host however it is written: git (curl, ssh) reaches the same server through each form.
    ['https://127.0.0.1:8443/acme/fleet.git', 'https://[::ffff:127.0.0.1]:8443/acme/fleet.git'],
    ['http://10.0.0.7/acme/fleet', 'http://[::FFFF:a00:7]/acme/fleet'],
    ['ssh://git@10.0.0.7/acme/fleet', 'ssh://git@[::ffff:10.0.0.7]/acme/fleet'],
    ['ssh://git@127.0.0.1/acme/fleet', 'ssh://git@127.1/acme/fleet'],
    ['https://git.example.org/acme/fleet', 'https://git.example.org./acme/fleet'],
    ['git@git.example.org:acme/fleet.git', 'ssh://git@Git.Example.Org./acme/fleet'],
    // A forge's paths ignore case: another key spelling Acme/Fleet must not pass for another repository (#47 review).
    ['https://github.com/acme/Fleet.git', 'https://github.com/ACME/fleet.git'],
  ])('%s and %s are one repository', (a, b) => {
    expect(sameRepository(a, b)).toBe(true);
  });

  it.each([
    ['https://github.com/acme/fleet.git', 'https://github.com/acme/fleet-staging.git'],
    ['https://github.com/acme/fleet.git', 'https://gitlab.com/acme/fleet.git'],
    ['/srv/git/Fleet.git', 'file:///srv/git/fleet.git'],
    ['not a url', 'not a url'],
  ])('%s and %s are not', (a, b) => {
    expect(sameRepository(a, b)).toBe(false);
  });

  it('gives Flux an ssh:// URL for a scp-like one, other URLs unchanged', () => {
    expect(fluxUrlOf('git@github.com:acme/fleet.git')).toBe('ssh://git@github.com/acme/fleet.git');
    expect(fluxUrlOf('https://github.com/acme/fleet.git')).toBe('https://github.com/acme/fleet.git');
  });

  it('sees credentials in a password, or in user information outside ssh', () => {
    expect(hasCredentials('https://bot:token@github.com/acme/fleet.git')).toBe(true);
    expect(hasCredentials('https://ghp_token@github.com/acme/fleet.git')).toBe(true);
    expect(hasCredentials('ssh://git:secret@github.com/acme/fleet.git')).toBe(true);
    expect(hasCredentials('ssh://git@github.com/acme/fleet.git')).toBe(false);
    expect(hasCredentials('git@github.com:acme/fleet.git')).toBe(false);
    expect(hasCredentials('https://github.com/acme/fleet.git')).toBe(false);
  });
});

describe('withoutCredentials', () => {
  it.each([
    ['https://user:Secret123@git.example.com/x.git', 'https://***@git.example.com/x.git'],
    ['https://ghpToken@git.example.com:8443/x.git?a=1', 'https://***@git.example.com:8443/x.git?***'],
    ['https://git.example.com/x.git?private_token=glpat-secret', 'https://git.example.com/x.git?***'],
    ['ssh://git@git.example.com/x.git#token', 'ssh://git@git.example.com/x.git?***'],
    ['https://[::1]:8443/x.git', 'https://[::1]:8443/x.git'],
    ['https://git.example.com/x.git', 'https://git.example.com/x.git'],
    ['ssh://git@git.example.com/x.git', 'ssh://git@git.example.com/x.git'],
    ['git@git.example.com:x.git', 'git@git.example.com:x.git'],
  ])('%s -> %s', (url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });
});

describe('the one form of a repository URL (normaliseRepoUrl)', () => {
  it.each([
    // scp-like forms become the ssh:// URL git is then given: what was checked is what is reached.
    ['root@127.0.0.1:/srv/git/tenant-a/fleet.git', 'ssh://root@127.0.0.1/srv/git/tenant-a/fleet.git'],
    ['git@github.com:acme/fleet.git', 'ssh://git@github.com/acme/fleet.git'],
    ['HTTPS://Git.Example.com:443/acme/fleet.git/', 'https://git.example.com/acme/fleet.git'],
    ['ssh://git@Git.Example.Org.:22/acme/fleet', 'ssh://git@git.example.org/acme/fleet'],
    ['ssh://git@127.1:2222/acme/fleet', 'ssh://git@127.0.0.1:2222/acme/fleet'],
    ['https://[2001:DB8:0::7]:8443/fleet.git', 'https://[2001:db8::7]:8443/fleet.git'],
    ['file:///srv/git/fleet.git', 'file:///srv/git/fleet.git'],
  ])('%s is %s', (url, form) => {
    expect(repoUrlProblem(url)).toBeNull();
    expect(normaliseRepoUrl(url)).toBe(form);
    // The read-model's identity is the one form's: a request in any spelling finds the runs of the others.
    expect(sameRepository(url, form)).toBe(true);
  });

  it.each([
    ['root@127.0.0.1:/srv/git/tenant-a//../tenant-b/fleet.git', /empty path segment/],
    ['ssh://root@127.0.0.1/srv/git/tenant-a//../tenant-b/fleet.git', /empty path segment/],
    ['https://git.example.com/org//repo.git', /empty path segment/],
    ['https://git.example.com//org/repo.git', /empty path segment/],
    ['https://git.example.com/team-a/../team-b/x.git', /"\." or "\.\." path segments/],
    ['git@git.example.com:team-a/./x.git', /"\." or "\.\." path segments/],
    ['https://git.example.com/team-a;/../team-b/x.git', /"\\", ";"/],
    ['https://git.example.com/team-a/%2e%2E/team-b/x.git', /percent-encoded/],
    ['https://git.example.com/team-a%2Fx.git', /percent-encoded/],
    ['https://git.example.com/team-a/%252e%252e/x.git', /percent-encoded/],
    ['https://git.example.com/team-a\\..\\team-b/x.git', /"\\", ";"/],
    ['https://git.example.com/team-a/.\t./team-b/x.git', /whitespace or control characters/],
    ['https://git.example.com/x.git?api_key=secret', /query string or fragment/],
    ['git.example.com/x.git', /must be a URL with a scheme/],
  ])('refuses %s', (url, problem) => {
    expect(repoUrlProblem(url)).toMatch(problem);
    expect(() => normaliseRepoUrl(url)).toThrow(problem);
  });

  it('finds runs recorded before these forms were refused under the repository git reached with them', () => {
    // What an ssh server's file system made of the path: tenant-b's repository, not tenant-a/tenant-b.
    expect(
      sameRepository(
        'root@127.0.0.1:/srv/git/tenant-a//../tenant-b/fleet.git',
        'ssh://root@127.0.0.1/srv/git/tenant-b/fleet.git',
      ),
    ).toBe(true);
    expect(sameRepository('https://git.example.com/org//repo', 'https://git.example.com/org/repo.git')).toBe(true);
  });
});
